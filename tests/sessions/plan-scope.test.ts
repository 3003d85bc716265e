// plan({ ..., scope }): a workspace session's move planned with the scope it is made with ("files" or "both"), step for
// step and file for file as that move then does it, not as the conversation's move would.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint, MovePlan, MoveResult } from "../../src/index.js";
import { appendLineTool, readOrNull, writeFileTool } from "../fixtures/file-tools.js";
import { makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;
const file = (rel: string) => path.join(ws, rel);
const ids = (calls: { id: string }[]) => calls.map((c) => c.id);

beforeEach(() => {
  dir = makeTempDir("forkpoint-plan-scope-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [appendLineTool(), writeFileTool()] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

function sameMove(plan: MovePlan, moved: MoveResult): void {
  expect(ids(plan.undone)).toEqual(ids(moved.undone));
  expect(ids(plan.replayed)).toEqual(ids(moved.replayed));
  expect(ids(plan.skipped)).toEqual(ids(moved.skipped));
  expect(plan.files).toEqual(moved.files);
}

it('a "both" rewind to a checkpoint whose files hold a call: planned as restored with them, not replayed', async () => {
  fs.writeFileSync(file("plan.md"), "draft 1\n");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("append_line", { path: file("log"), line: "L1" });
  const withL1 = await s.checkpoint({ name: "L1" });
  await s.rollback(start.id, { scope: "both" });
  expect(readOrNull(file("log"))).toBeNull();

  // The conversation's move would replay the call; the "both" one brings it back with the files.
  const conversation = await s.plan({ checkpointId: withL1.id });
  expect(conversation.replayed.map((t) => t.tool)).toEqual(["append_line"]);
  expect(conversation.files).toBeUndefined();
  const both = await s.plan({ checkpointId: withL1.id, scope: "both" });
  expect(both).toMatchObject({ replayed: [], undone: [], files: { written: ["log"], deleted: [] }, drift: [] });
  expect(readOrNull(file("log"))).toBeNull();
  sameMove(both, await s.rollback(withL1.id, { scope: "both" }));
  expect(readOrNull(file("log"))).toBe("L1\n");

  // Back: the call its snapshot does not hold is undone, and its file goes.
  const back = await s.plan({ checkpointId: start.id, scope: "both" });
  expect(back).toMatchObject({ undone: [{ tool: "append_line" }], replayed: [], files: { deleted: ["log"] }, drift: [] });
  const moved = await s.rollback(start.id, { scope: "both" });
  expect(ids(moved.undone)).toEqual(ids(back.undone));
  expect(readOrNull(file("log"))).toBeNull();
});

it('a "files" restore: no tool runs and the conversation stays; the files it writes and deletes, and its drift', async () => {
  fs.writeFileSync(file("plan.md"), "draft 1\n");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.append({ role: "user", content: "go" });
  await s.invoke("write_file", { path: file("plan.md"), text: "draft 2\n" });
  await s.invoke("write_file", { path: file("notes.md"), text: "n\n" });
  const before = await s.info();

  const files = await s.plan({ checkpointId: start.id, scope: "files" });
  expect(files).toMatchObject({ undone: [], replayed: [], leftBehind: [], drift: [] });
  expect(files.branch).toMatchObject({ id: before.currentBranchId });
  expect(files.files).toEqual({ written: ["plan.md"], deleted: ["notes.md"] });

  // Saved by hand: the plan names the drift the move refuses.
  fs.writeFileSync(file("plan.md"), "my own\n");
  const drifted = await s.plan({ checkpointId: start.id, scope: "files" });
  expect(drifted.drift).toEqual(["plan.md"]);
  expect(await rejectionOf(s.rollback(start.id, { scope: "files" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  fs.writeFileSync(file("plan.md"), "draft 2\n");

  const moved = await s.rollback(start.id, { scope: "files" });
  expect(moved.files).toEqual(files.files);
  expect((await s.info()).currentBranchId).toBe(before.currentBranchId);
  expect(readOrNull(file("plan.md"))).toBe("draft 1\n");
});

it('scope is checked as a move checks it: its values, a workspace, and "files" for an edit', async () => {
  const s = await fp.createSession({ userId: "u" });
  const [m] = await s.append({ role: "user", content: "hi" });
  const cp = await s.checkpoint();
  expect(await rejectionOf(s.plan({ checkpointId: cp.id, scope: "bogus" as "both" }))).toMatchObject({
    code: "VALIDATION_ERROR",
    field: "scope",
  });
  expect(await rejectionOf(s.plan({ checkpointId: cp.id, scope: "files" }))).toMatchObject({ code: "VALIDATION_ERROR", field: "scope" });
  expect(await rejectionOf(s.rollback(cp.id, { scope: "files" }))).toMatchObject({ code: "VALIDATION_ERROR", field: "scope" });
  await s.attachWorkspace(ws);
  await s.checkpoint();
  expect(await rejectionOf(s.plan({ messageId: m!.id, scope: "files" }))).toMatchObject({ code: "VALIDATION_ERROR", field: "scope" });
  // "conversation", given or not, is the plan it always was.
  expect(await s.plan({ checkpointId: cp.id, scope: "conversation" })).toEqual(await s.plan({ checkpointId: cp.id }));
});
