// A "conversation" move (the default scope) of a session with a workspace runs its calls' undos and replays on the
// files: a save by hand made after a call, in a file one of them writes, is refused (WORKSPACE_DRIFT, nothing changed)
// or saved first when forced; a hand edit made before the call is put back as before; drift elsewhere is left as it is.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineTool, type SessionHandle } from "../../src/index.js";
import { readOrNull, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { dumpOf } from "../fixtures/backend.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const SAVE = "the user's save\n";

/** A workspace (a.txt, b.txt) checkpointed at c0, after which write_file changes a.txt as the agent. */
async function agentWrote() {
  const ws = tempDir("forkpoint-conv-drift-");
  const at = (rel: string) => path.join(ws, rel);
  fs.writeFileSync(at("a.txt"), "v0\n");
  fs.writeFileSync(at("b.txt"), "b0\n");
  const { fp, path: db } = dbs.open({ tools: [writeFileTool()] as never[] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const [m1] = await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  const [m2] = await s.append({ role: "assistant", content: "writing a" });
  await s.invoke("write_file", { path: at("a.txt"), text: "by the agent\n" });
  return { s, at, db, c0, m1: m1!, m2: m2! };
}

const files = (at: (rel: string) => string) => [readOrNull(at("a.txt")), readOrNull(at("b.txt"))];

/** Refused with WORKSPACE_DRIFT, the directory and the database unchanged. */
async function refusedUnchanged(db: string, at: (rel: string) => string, move: () => Promise<unknown>) {
  const before = { dump: await dumpOf(db), files: files(at) };
  expect(await rejectionOf(move())).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect({ dump: await dumpOf(db), files: files(at) }).toEqual(before);
}

it("a save after the call is refused by rollback, edit and regenerate with no scope", async () => {
  const { s, at, db, c0, m1, m2 } = await agentWrote();
  fs.writeFileSync(at("a.txt"), SAVE);
  await refusedUnchanged(db, at, () => s.rollback(c0.id));
  await refusedUnchanged(db, at, () => s.edit(m1.id, { content: "go elsewhere" }));
  await refusedUnchanged(db, at, () => s.regenerate(m2.id, { content: "another answer" }));
  expect(readOrNull(at("a.txt"))).toBe(SAVE);
});

/** A "both" rewind to c0, the agent's write on the new branch, the user's save after it: `back` is the old branch. */
async function movedThenWrote() {
  const { s, at, db, c0 } = await agentWrote();
  const back = (await s.info()).currentBranchId;
  await s.rollback(c0.id, { scope: "both" });
  await s.invoke("write_file", { path: at("a.txt"), text: "by the agent again\n" });
  fs.writeFileSync(at("a.txt"), SAVE);
  return { s, at, db, back };
}

it("a save after the call is refused by undo and switchBranch with no scope", async () => {
  const { s, at, db, back } = await movedThenWrote();
  await refusedUnchanged(db, at, () => s.undo());
  await refusedUnchanged(db, at, () => s.switchBranch(back));
  expect(readOrNull(at("a.txt"))).toBe(SAVE);
});

/** Forced: the save is kept in a checkpoint of its own, then the move goes on; a files rollback to it brings it back. */
async function forcedKeepsSave(
  s: SessionHandle,
  at: (rel: string) => string,
  move: () => Promise<{ savedDrift?: { checkpointId: string; files: string[] } }>,
) {
  const moved = await move();
  expect(moved.savedDrift?.files).toEqual(["a.txt"]);
  expect(readOrNull(at("a.txt"))).not.toBe(SAVE);
  const saved = moved.savedDrift!.checkpointId;
  expect((await s.restore(saved)).checkpoint.id).toBe(saved);
  expect((await s.diffFiles(saved, "disk")).modified).toEqual(["a.txt"]);
  await s.rollback(saved, { scope: "files" });
  expect(readOrNull(at("a.txt"))).toBe(SAVE);
}

it("forced, a rollback saves the drift first, then undoes the call", async () => {
  const { s, at, c0 } = await agentWrote();
  fs.writeFileSync(at("a.txt"), SAVE);
  await forcedKeepsSave(s, at, async () => {
    const moved = await s.rollback(c0.id, { force: true });
    expect(moved.undone.map((t) => t.tool)).toEqual(["write_file"]);
    expect(readOrNull(at("a.txt"))).toBe("v0\n");
    return moved;
  });
});

it("forced, an undo saves the drift first, then moves back", async () => {
  const { s, at } = await movedThenWrote();
  await forcedKeepsSave(s, at, async () => {
    const moved = await s.undo({ force: true });
    expect(readOrNull(at("a.txt"))).toBe("by the agent\n");
    return moved;
  });
});

it("a hand edit made before the call is still put back by the call's undo, not refused", async () => {
  const { s, at, c0 } = await (async () => {
    const ws = tempDir("forkpoint-conv-drift-");
    const at = (rel: string) => path.join(ws, rel);
    fs.writeFileSync(at("a.txt"), "v0\n");
    const { fp } = dbs.open({ tools: [writeFileTool()] as never[] });
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    await s.append({ role: "user", content: "go" });
    const c0 = await s.checkpoint({ name: "c0" });
    fs.writeFileSync(at("a.txt"), "hand edit before the call\n");
    await s.invoke("write_file", { path: at("a.txt"), text: "by the agent\n" });
    return { s, at, c0 };
  })();
  const moved = await s.rollback(c0.id);
  expect(moved.undone.map((t) => t.tool)).toEqual(["write_file"]);
  expect(moved.savedDrift).toBeUndefined();
  expect(readOrNull(at("a.txt"))).toBe("hand edit before the call\n");
  expect((await s.listCheckpoints()).items.map((c) => c.name)).toEqual(["c0"]);
  // Still drift, unsaved: a files move refuses it.
  expect(await rejectionOf(s.rollback(c0.id, { scope: "files" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
});

it("drift in a file no undo or replay writes is left as it is, not refused", async () => {
  const { s, at, c0 } = await agentWrote();
  fs.writeFileSync(at("b.txt"), SAVE);
  const moved = await s.rollback(c0.id);
  expect(moved.savedDrift).toBeUndefined();
  expect(files(at)).toEqual(["v0\n", SAVE]);
  // Still drift: a files move refuses it.
  expect(await rejectionOf(s.rollback(c0.id, { scope: "files" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
});

it("a call recorded without its paths, or a workspace replay that changed no file, refuses no drift", async () => {
  const ws = tempDir("forkpoint-conv-drift-");
  const at = (rel: string) => path.join(ws, rel);
  fs.writeFileSync(at("a.txt"), "v0\n");
  const readFile = defineTool({
    name: "read_file",
    effects: "workspace",
    run: ({ path: p }: { path: string }) => fs.readFileSync(p, "utf8"),
    undo: () => undefined,
  });
  const { fp } = dbs.open({ tools: [writeFileTool(), readFile] as never[] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  // The framework wrote a.txt itself and recorded the call: its own write is drift, which its undo takes back.
  fs.writeFileSync(at("a.txt"), "by the framework\n");
  await s.recordToolCall({ tool: "write_file", args: { path: at("a.txt"), text: "by the framework\n" }, result: { previous: "v0\n" } });
  const undone = await s.rollback(c0.id);
  expect(undone.savedDrift).toBeUndefined();
  expect(readOrNull(at("a.txt"))).toBe("v0\n");
  // A read changes no file; replayed by undo, it writes none: a save elsewhere is no reason to refuse.
  await s.invoke("read_file", { path: at("a.txt") });
  const c1 = await s.checkpoint({ name: "c1" });
  await s.rollback(c0.id);
  fs.writeFileSync(at("notes.md"), SAVE);
  const back = await s.undo();
  expect(back.replayed.map((t) => t.tool)).toEqual(["read_file"]);
  expect(readOrNull(at("notes.md"))).toBe(SAVE);
  expect(c1.name).toBe("c1");
});
