// A "both" move's files and tool track agree when calls of another lineage are applied as the files are read or restored
// (issue 32 review): a snapshot records the calls off its lineage whose effects its files hold, and a failed undo's files stay.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { appendLineTool, flakyWriteTool, readOrNull, writeFileTool, type FlakyControl } from "../fixtures/file-tools.js";
import { makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { openForkpoint, sqlOn } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;
const control: FlakyControl = {};
const file = (rel: string) => path.join(ws, rel);
const dbFile = () => path.join(dir, "forkpoint.db");

beforeEach(() => {
  dir = makeTempDir("forkpoint-off-lineage-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  control.failUndo = false;
  control.failRun = false;
  fp = openForkpoint({ path: dbFile(), tools: [appendLineTool(), writeFileTool(), flakyWriteTool({ control })] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

// A switch back stopped by a failing replay leaves the other branch's append applied; a checkpoint then holds its line.
// Restoring that checkpoint leaves the append applied (its files hold it), so a conversation switch to its branch does
// not replay it: the line is in the file once.
it("a checkpoint taken while a stopped replay left another branch's call applied, restored, holds it once", async () => {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  const root = (await s.info()).currentBranchId;
  await s.invoke("append_line", { path: file("log"), line: "L" });
  await s.invoke("flaky_write", { path: file("f"), text: "f" });
  await s.rollback(start.id, { scope: "both" });
  control.failRun = true;
  expect((await rejectionOf(s.switchBranch(root, { scope: "both" }))).code).toBe("REPLAY_FAILED");
  control.failRun = false;
  expect(readOrNull(file("log"))).toBe("L\n");
  const between = await s.checkpoint({ name: "between" });

  await s.rollback(between.id, { scope: "both" });
  const applied = (await s.toolTrack({ branchId: root }))[0]!.applied;
  expect(readOrNull(file("log")) === "L\n").toBe(applied);
  await s.switchBranch(root, { scope: "conversation" });
  expect(readOrNull(file("log"))).toBe("L\n");
});

// The same snapshot restored after that call was undone: its line comes back with the files, so it is applied again.
it("a snapshot holding another branch's call, restored after that call was undone, marks it applied again", async () => {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  const root = (await s.info()).currentBranchId;
  await s.invoke("append_line", { path: file("log"), line: "L" });
  await s.invoke("flaky_write", { path: file("f"), text: "f" });
  await s.rollback(start.id, { scope: "both" });
  control.failRun = true;
  expect((await rejectionOf(s.switchBranch(root, { scope: "both" }))).code).toBe("REPLAY_FAILED");
  control.failRun = false;
  const between = await s.checkpoint({ name: "between" });
  await s.rollback(start.id, { scope: "both" });
  expect(readOrNull(file("log"))).toBe(null);
  expect((await s.toolTrack({ branchId: root }))[0]!.applied).toBe(false);

  await s.rollback(between.id, { scope: "both" });
  expect(readOrNull(file("log"))).toBe("L\n");
  expect((await s.toolTrack({ branchId: root }))[0]!.applied).toBe(true);
  await s.switchBranch(root, { scope: "conversation" });
  expect(readOrNull(file("log"))).toBe("L\n");
  expect(readOrNull(file("f"))).toBe("f");
});

// Under onUndoError "continue", a failed undo leaves its call applied: the restore keeps the files its effect is in (as
// forkpoint saw them, so no drift) and writes the target's snapshot everywhere else, reporting them as kept.
it("a 'both' move under 'continue' whose undo fails leaves files that hold what the track says is applied", async () => {
  fs.writeFileSync(file("other"), "0");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  const root = (await s.info()).currentBranchId;
  await s.invoke("flaky_write", { path: file("f"), text: "work" });
  await s.checkpoint({ name: "worked" });
  fs.writeFileSync(file("other"), "by hand, saved");
  await s.checkpoint({ name: "saved" });
  control.failUndo = true;
  const moved = await s.rollback(start.id, { scope: "both", onUndoError: "continue" });
  control.failUndo = false;
  expect(moved.failed).toHaveLength(1);
  expect(moved.files).toEqual({ written: ["other"], deleted: [], kept: ["f"] });
  expect(readOrNull(file("other"))).toBe("0");
  const applied = (await s.toolTrack({ branchId: root }))[0]!.applied;
  expect(applied).toBe(true);
  expect(readOrNull(file("f")) === "work").toBe(applied);

  // A snapshot taken now holds the call: restoring it keeps the call applied, with its file.
  const after = await s.checkpoint({ name: "after" });
  await s.switchBranch(root, { scope: "both" });
  expect(readOrNull(file("f"))).toBe("work");
  await s.rollback(after.id, { scope: "both" });
  expect(readOrNull(file("f"))).toBe("work");
  expect((await s.toolTrack({ branchId: root }))[0]!.applied).toBe(true);
  // Moved back for good: its undo works now, and both agree again.
  await s.rollback(start.id, { scope: "both" });
  expect(readOrNull(file("f"))).toBe(null);
  expect((await s.toolTrack({ branchId: root }))[0]!.applied).toBe(false);
});

/** A session whose flaky call on `root` (no snapshot before it) is applied, beside branch `other` holding `g`'s write. */
async function offLineageBeforeSnapshot() {
  const s = await fp.createSession({ userId: "u" });
  await s.append({ role: "user", content: "hi" });
  const bare = await s.checkpoint({ name: "before the workspace" });
  const root = (await s.info()).currentBranchId;
  await s.attachWorkspace(ws);
  await s.invoke("flaky_write", { path: file("f"), text: "work" });
  await s.rollback(bare.id);
  const other = (await s.info()).currentBranchId;
  await s.invoke("write_file", { path: file("g"), text: "g" });
  await s.checkpoint({ name: "other" });
  await s.switchBranch(root);
  expect([readOrNull(file("f")), readOrNull(file("g"))]).toEqual(["work", null]);
  return { s, root, other };
}

// The paths the call whose undo failed changed are recorded: only those stay as they are (kept); the rest of the
// target's snapshot comes back, and the target's call whose file came back with it is applied.
it("a failed undo with no snapshot before its call keeps only its recorded paths", async () => {
  const { s, root, other } = await offLineageBeforeSnapshot();
  control.failUndo = true;
  const moved = await s.switchBranch(other, { scope: "both", onUndoError: "continue" });
  control.failUndo = false;
  expect(moved.failed).toHaveLength(1);
  expect(moved.files).toEqual({ written: ["g"], deleted: [], kept: ["f"] });
  expect([readOrNull(file("f")), readOrNull(file("g"))]).toEqual(["work", "g"]);
  expect((await s.toolTrack({ branchId: root })).map((t) => t.applied)).toEqual([true]);
  expect((await s.toolTrack()).map((t) => t.applied)).toEqual([true]);

  // Moved again once the undo works: both agree with the branch's snapshot.
  await s.switchBranch(other, { scope: "both" });
  expect([readOrNull(file("f")), readOrNull(file("g"))]).toEqual([null, "g"]);
  expect((await s.toolTrack()).map((t) => t.applied)).toEqual([true]);
});

// Without recorded paths (a database written before they were kept) and no snapshot before the call whose undo failed,
// the paths its effect is in are not known: every file stays as it is (listed as kept), and the target's calls its
// snapshot holds are not marked applied (their files did not come back).
it("a failed undo with no snapshot before its call and no recorded paths leaves every file, and the target's held calls unapplied", async () => {
  const { s, root, other } = await offLineageBeforeSnapshot();
  await sqlOn(dbFile(), `DELETE FROM call_paths`);
  control.failUndo = true;
  const moved = await s.switchBranch(other, { scope: "both", onUndoError: "continue" });
  control.failUndo = false;
  expect(moved.failed).toHaveLength(1);
  expect(moved.files).toEqual({ written: [], deleted: [], kept: ["f", "g"] });
  expect([readOrNull(file("f")), readOrNull(file("g"))]).toEqual(["work", null]);
  expect((await s.toolTrack({ branchId: root })).map((t) => t.applied)).toEqual([true]);
  expect((await s.toolTrack()).map((t) => t.applied)).toEqual([false]);

  // Moved again once the undo works: both agree with the branch's snapshot.
  await s.switchBranch(other, { scope: "both" });
  expect([readOrNull(file("f")), readOrNull(file("g"))]).toEqual([null, "g"]);
  expect((await s.toolTrack()).map((t) => t.applied)).toEqual([true]);
});
