// A "conversation" move whose steps include a call with no record of its files (recordToolCall's): a save over a file
// another of its calls wrote over a hand edit is still drift that call's undo or replay would write over: refused
// (WORKSPACE_DRIFT, nothing changed), or saved in a checkpoint of its own first when forced, never lost.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { dumpOf } from "../fixtures/backend.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const HAND = "hand edit before the call\n";
const AGENT = "by the agent\n";
const SAVE = "the user's save\n";

/** a.txt checkpointed at c0 and edited by hand; `calls` then runs on the session. */
async function setup(calls: (s: Awaited<ReturnType<typeof open>>["s"], ws: string) => Promise<void>) {
  const { s, ws, db, at } = await open();
  fs.writeFileSync(at, "v0\n");
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  const branch = (await s.info()).currentBranchId;
  fs.writeFileSync(at, HAND);
  await calls(s, ws);
  return { s, at, db, c0, branch };
}

async function open() {
  const ws = tempDir("forkpoint-conv-unrecorded-");
  const { fp, path: db } = dbs.open({ tools: [writeFileTool()] as never[] });
  return { s: await fp.createSession({ userId: "u" }), ws, db, at: path.join(ws, "a.txt") };
}

/** b.txt written elsewhere and recorded with recordToolCall: no record of its paths. */
async function recorded(s: Awaited<ReturnType<typeof open>>["s"], ws: string) {
  const at = path.join(ws, "b.txt");
  fs.writeFileSync(at, "B\n");
  await s.recordToolCall({ tool: "write_file", args: { path: at, text: "B\n" }, result: { previous: null } });
}

/** Refused with WORKSPACE_DRIFT, the file and the database unchanged. */
async function refusedUnchanged(db: string, at: string, move: () => Promise<unknown>) {
  const before = { dump: await dumpOf(db), file: readOrNull(at) };
  expect(await rejectionOf(move())).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect({ dump: await dumpOf(db), file: readOrNull(at) }).toEqual(before);
}

it("a save after a call over a hand edit, a recorded call after it: the rewind is refused, or saves it when forced", async () => {
  const { s, at, db, c0 } = await setup(async (s, ws) => {
    await s.invoke("write_file", { path: path.join(ws, "a.txt"), text: AGENT });
    await recorded(s, ws);
  });
  fs.writeFileSync(at, SAVE);
  await refusedUnchanged(db, at, () => s.rollback(c0.id));
  const moved = await s.rollback(c0.id, { force: true });
  expect(moved.savedDrift?.files).toContain("a.txt");
  expect(readOrNull(at)).toBe(HAND);
  expect((await s.diffFiles(c0.id, moved.savedDrift!.checkpointId)).patch).toContain("+the user's save");
});

it("a save after a rewind put a hand edit back, a recorded call after it: the replay back is refused", async () => {
  const { s, at, db, c0, branch } = await setup(async (s, ws) => {
    await s.invoke("write_file", { path: path.join(ws, "a.txt"), text: AGENT });
  });
  await s.rollback(c0.id);
  expect(readOrNull(at)).toBe(HAND);
  await recorded(s, path.dirname(at));
  fs.writeFileSync(at, SAVE);
  await refusedUnchanged(db, at, () => s.switchBranch(branch));
  const moved = await s.switchBranch(branch, { force: true });
  expect(moved.savedDrift?.files).toContain("a.txt");
  expect(readOrNull(at)).toBe(AGENT);
});
