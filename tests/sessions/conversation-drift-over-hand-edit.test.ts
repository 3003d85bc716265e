// A "conversation" move over a file that held a hand edit as a call began: the call's undo puts that edit back, but a
// save made after the call (or after a rewind put the edit back, before a replay) is drift the move would write over:
// refused (WORKSPACE_DRIFT, nothing changed), or saved in a checkpoint of its own first when forced.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { dumpOf, sqlOn } from "../fixtures/backend.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const HAND = "hand edit before the call\n";
const AGENT = "by the agent\n";
const SAVE = "the user's save\n";

/** a.txt checkpointed at c0, edited by hand, then written by write_file as the agent. */
async function handEditThenCall() {
  const ws = tempDir("forkpoint-conv-hand-");
  const at = path.join(ws, "a.txt");
  fs.writeFileSync(at, "v0\n");
  const { fp, path: db } = dbs.open({ tools: [writeFileTool()] as never[] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const [m1] = await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  fs.writeFileSync(at, HAND);
  await s.invoke("write_file", { path: at, text: AGENT });
  return { s, at, db, c0, m1: m1!, branch: (await s.info()).currentBranchId };
}

/** Refused with WORKSPACE_DRIFT, the file and the database unchanged. */
async function refusedUnchanged(db: string, at: string, move: () => Promise<unknown>) {
  const before = { dump: await dumpOf(db), file: readOrNull(at) };
  expect(await rejectionOf(move())).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect({ dump: await dumpOf(db), file: readOrNull(at) }).toEqual(before);
}

/** The text a.txt holds in checkpoint `id`, as a diff from c0 shows it. */
async function heldIn(s: Awaited<ReturnType<typeof handEditThenCall>>["s"], c0: string, id: string) {
  return (await s.diffFiles(c0, id)).patch;
}

it("a save after the call is refused by a rewind that would put the older hand edit back over it", async () => {
  const { s, at, db, c0, m1 } = await handEditThenCall();
  fs.writeFileSync(at, SAVE);
  await refusedUnchanged(db, at, () => s.rollback(c0.id));
  await refusedUnchanged(db, at, () => s.edit(m1.id, { content: "go elsewhere" }));
  expect(readOrNull(at)).toBe(SAVE);
});

it("forced, the save is kept in a checkpoint of its own, then the undo puts the hand edit back", async () => {
  const { s, at, c0 } = await handEditThenCall();
  fs.writeFileSync(at, SAVE);
  const moved = await s.rollback(c0.id, { force: true });
  expect(moved.undone.map((t) => t.tool)).toEqual(["write_file"]);
  expect(moved.savedDrift?.files).toEqual(["a.txt"]);
  expect(readOrNull(at)).toBe(HAND);
  expect(await heldIn(s, c0.id, moved.savedDrift!.checkpointId)).toContain("+the user's save");
});

it("with no save after the call, the rewind puts the hand edit back and a replay writes over it, as before", async () => {
  const { s, at, c0, branch } = await handEditThenCall();
  const back = await s.rollback(c0.id);
  expect(back.savedDrift).toBeUndefined();
  expect(readOrNull(at)).toBe(HAND);
  const again = await s.switchBranch(branch);
  expect(again.replayed.map((t) => t.tool)).toEqual(["write_file"]);
  expect(again.savedDrift).toBeUndefined();
  expect(readOrNull(at)).toBe(AGENT);
});

it("the replay's own write over the hand edit is no save: the rewind after it puts the hand edit back (review w1)", async () => {
  const { s, at, db, c0, branch } = await handEditThenCall();
  await s.rollback(c0.id);
  await s.switchBranch(branch);
  expect(readOrNull(at)).toBe(AGENT);
  expect((await s.plan({ checkpointId: c0.id })).drift).toEqual([]);
  const back = await s.rollback(c0.id);
  expect([back.undone.map((t) => t.tool), back.savedDrift]).toEqual([["write_file"], undefined]);
  expect(readOrNull(at)).toBe(HAND);
  // Redone and undone again, the same: the replay's write is the call's own each time.
  expect((await s.undo()).replayed.map((t) => t.tool)).toEqual(["write_file"]);
  expect((await s.redo()).undone.map((t) => t.tool)).toEqual(["write_file"]);
  expect(readOrNull(at)).toBe(HAND);
  // A save after the replay is still refused.
  await s.switchBranch(branch);
  fs.writeFileSync(at, SAVE);
  await refusedUnchanged(db, at, () => s.rollback(c0.id));
});

it("a save after the rewind put the hand edit back is refused by a replay, or saved first when forced", async () => {
  const { s, at, db, c0, branch } = await handEditThenCall();
  await s.rollback(c0.id);
  fs.writeFileSync(at, SAVE);
  await refusedUnchanged(db, at, () => s.switchBranch(branch));
  await refusedUnchanged(db, at, () => s.undo());
  const moved = await s.switchBranch(branch, { force: true });
  expect(moved.replayed.map((t) => t.tool)).toEqual(["write_file"]);
  expect(moved.savedDrift?.files).toEqual(["a.txt"]);
  expect(readOrNull(at)).toBe(AGENT);
  expect(await heldIn(s, c0.id, moved.savedDrift!.checkpointId)).toContain("+the user's save");
});

it("calls one after another over the hand edit: a save after the last is refused; none, the first's hand edit stays", async () => {
  const { s, at, db, c0 } = await handEditThenCall();
  await s.invoke("write_file", { path: at, text: "by the agent again\n" });
  fs.writeFileSync(at, SAVE);
  await refusedUnchanged(db, at, () => s.rollback(c0.id));
  fs.writeFileSync(at, "by the agent again\n");
  const moved = await s.rollback(c0.id);
  expect(moved.undone.map((t) => t.tool)).toEqual(["write_file", "write_file"]);
  expect(moved.savedDrift).toBeUndefined();
  expect(readOrNull(at)).toBe(HAND);
});

it("a call recorded before what its run found and left was kept (an older database) is put back as before", async () => {
  const { s, at, db, c0 } = await handEditThenCall();
  await sqlOn(db, "UPDATE call_paths SET hand_edit_ids = NULL");
  fs.writeFileSync(at, SAVE);
  const moved = await s.rollback(c0.id);
  expect(moved.savedDrift).toBeUndefined();
  expect(readOrNull(at)).toBe(HAND);
});

it("a save back to what forkpoint last saw there (the attach) is still a save the rewind's undo would write over", async () => {
  const ws = tempDir("forkpoint-conv-hand-");
  const at = path.join(ws, "a.txt");
  const { fp, path: db } = dbs.open({ tools: [writeFileTool()] as never[] });
  const s = await fp.createSession({ userId: "u" });
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  fs.writeFileSync(at, "at attach\n");
  await s.attachWorkspace(ws);
  fs.writeFileSync(at, HAND);
  await s.invoke("write_file", { path: at, text: AGENT });
  fs.writeFileSync(at, "at attach\n");
  await refusedUnchanged(db, at, () => s.rollback(c0.id));
  const moved = await s.rollback(c0.id, { force: true });
  expect(moved.savedDrift?.files).toEqual(["a.txt"]);
  expect(readOrNull(at)).toBe(HAND);
  const saved = await s.diffFiles(moved.savedDrift!.checkpointId, (await s.checkpoint({ name: "after" })).id);
  expect(saved.patch).toContain("-at attach");
});

it("a save after the call kept in a checkpoint is no drift: the rewind puts the hand edit back", async () => {
  const { s, at, c0 } = await handEditThenCall();
  fs.writeFileSync(at, SAVE);
  await s.checkpoint({ name: "the save" });
  const moved = await s.rollback(c0.id);
  expect(moved.savedDrift).toBeUndefined();
  expect(readOrNull(at)).toBe(HAND);
});

it("a save a move's undo puts back and a later step writes over is refused, forced too; kept first, the move goes", async () => {
  const { s, at, db, c0, branch } = await handEditThenCall();
  await s.rollback(c0.id);
  fs.writeFileSync(at, SAVE);
  await s.invoke("write_file", { path: at, text: "by the agent on the new branch\n" });
  // The undo of the second call puts the save back, the replay of the first writes over it: the save is on no disk.
  await refusedUnchanged(db, at, () => s.switchBranch(branch));
  await refusedUnchanged(db, at, () => s.switchBranch(branch, { force: true }));
  await refusedUnchanged(db, at, () => s.undo());
  await s.rollback(c0.id);
  expect(readOrNull(at)).toBe(SAVE);
  const kept = await s.checkpoint({ name: "the save" });
  const moved = await s.switchBranch(branch);
  expect(moved.replayed.map((t) => t.tool)).toEqual(["write_file"]);
  expect(readOrNull(at)).toBe(AGENT);
  expect(await heldIn(s, c0.id, kept.id)).toContain("+the user's save");
});

it("two saves two undos put back, a replay writes over: one refusal names both calls, newest first", async () => {
  const { s, at, c0, branch } = await handEditThenCall();
  await s.rollback(c0.id);
  fs.writeFileSync(at, "first save\n");
  await s.invoke("write_file", { path: at, text: "A1\n" });
  await s.append({ role: "user", content: "more" });
  const c1 = await s.checkpoint({ name: "c1" });
  fs.writeFileSync(at, "second save\n");
  await s.invoke("write_file", { path: at, text: "A2\n" });
  const [a1, a2] = (await s.toolTrack()).slice(-2);
  const refused = (await rejectionOf(s.switchBranch(branch))) as { code: string; message: string };
  expect(refused.code).toBe("WORKSPACE_DRIFT");
  expect(refused.message).toContain(`calls ${a2!.id}, ${a1!.id}`);
  // Its advice works: each rewind puts one save back for a checkpoint to keep, then the move goes.
  await s.rollback(c1.id);
  expect(readOrNull(at)).toBe("second save\n");
  await s.checkpoint({ name: "second" });
  await s.rollback(c0.id);
  expect(readOrNull(at)).toBe("first save\n");
  await s.checkpoint({ name: "first" });
  await s.switchBranch(branch);
  expect(readOrNull(at)).toBe(AGENT);
});
