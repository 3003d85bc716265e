// Undo is LIFO over the whole applied set (issue 32 review): a replay stopped by a failing call leaves another branch's
// append applied, and a call made on the current branch then appends after it. Moving the world back to the branch
// undoes the later call first, then that other append (its undo puts the file back to its size before it), then
// replays the later call: its line is back on top, and it stays applied with its effect. plan() says the same; a later
// call that cannot be undone (no undo) leaves the one under it applied, reported skipped, as does one whose undo fails
// under "continue"; a move restoring files undoes a held call above the one it undoes first too, and its files bring
// that call back.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type Forkpoint, type SessionHandle } from "../../src/index.js";
import { appendLineTool, flakyWriteTool, readOrNull, type FlakyControl, noteLineTool } from "../fixtures/file-tools.js";
import { makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let fp: Forkpoint;
const control: FlakyControl = {};
const file = (rel: string) => path.join(dir, rel);
const idsOf = (list: readonly { id: string }[]) => list.map((t) => t.id);

beforeEach(() => {
  dir = makeTempDir("forkpoint-undo-under-later-");
  control.failRun = false;
  control.failUndo = false;
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [appendLineTool(), flakyWriteTool({ control }), noteLineTool] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

/** The root branch appends Lx; a switch back to it from another branch stops after replaying Lx: Lx stays applied. */
async function otherAppendLeftApplied(s: SessionHandle, at = file) {
  const start = await s.checkpoint({ name: "start" });
  const root = (await s.info()).currentBranchId;
  await s.invoke("append_line", { path: at("log"), line: "Lx" });
  await s.invoke("flaky_write", { path: at("c"), text: "g" });
  await s.rollback(start.id);
  const other = (await s.info()).currentBranchId;
  control.failRun = true;
  expect((await rejectionOf(s.switchBranch(root))).code).toBe("REPLAY_FAILED");
  control.failRun = false;
  const lx = (await s.toolTrack({ branchId: root }))[0]!;
  expect(lx.applied).toBe(true);
  return { start, root, other, lx };
}

it("an append made after another branch's applied append keeps its line when that one is undone", async () => {
  const s = await fp.createSession({ userId: "u" });
  const { other, lx } = await otherAppendLeftApplied(s);
  await s.invoke("append_line", { path: file("log"), line: "Ly" });
  expect(readOrNull(file("log"))).toBe("Lx\nLy\n");

  const moved = await s.switchBranch(other);
  const ly = (await s.toolTrack()).find((t) => t.tool === "append_line")!;
  expect(idsOf(moved.undone)).toEqual([ly.id, lx.id]);
  expect(idsOf(moved.replayed)).toEqual([ly.id]);
  expect(moved.skipped).toEqual([]);
  expect(ly.applied).toBe(true);
  expect(readOrNull(file("log"))).toBe("Ly\n");
});

it("plan() lists the later call in undone and replayed, as the move does", async () => {
  const s = await fp.createSession({ userId: "u" });
  const { other, lx } = await otherAppendLeftApplied(s);
  await s.invoke("append_line", { path: file("log"), line: "Ly" });
  const ly = (await s.toolTrack()).find((t) => t.tool === "append_line")!;

  const planned = await s.plan({ branchId: other });
  expect(idsOf(planned.undone)).toEqual([ly.id, lx.id]);
  expect(idsOf(planned.replayed)).toEqual([ly.id]);
  const moved = await s.switchBranch(other);
  expect(idsOf(moved.undone)).toEqual(idsOf(planned.undone));
  expect(idsOf(moved.replayed)).toEqual(idsOf(planned.replayed));
  expect(idsOf(moved.skipped)).toEqual(idsOf(planned.skipped));
});

// A saga stops compensating at a step it cannot compensate: the call under it stays applied, reported skipped (and
// refused under refuseIrreversible, before anything runs).
it("a later call with no undo leaves the one under it applied, reported skipped", async () => {
  const s = await fp.createSession({ userId: "u" });
  const { root, other, lx } = await otherAppendLeftApplied(s);
  await s.invoke("note_line", { path: file("log"), line: "Ly" });
  await s.switchBranch(root);
  const c = (await s.toolTrack())[1]!;
  expect([c.applied, readOrNull(file("c"))]).toEqual([true, "g"]);

  const planned = await s.plan({ branchId: other });
  expect([idsOf(planned.undone), idsOf(planned.replayed), idsOf(planned.skipped)]).toEqual([[c.id], [], [lx.id]]);
  const refused = await rejectionOf(s.switchBranch(other, { refuseIrreversible: true }));
  expect(refused.code).toBe("IRREVERSIBLE");
  expect([readOrNull(file("log")), readOrNull(file("c")), (await s.info()).currentBranchId]).toEqual(["Lx\nLy\n", "g", root]);

  const moved = await s.switchBranch(other);
  expect([idsOf(moved.undone), idsOf(moved.replayed), idsOf(moved.skipped)]).toEqual([[c.id], [], [lx.id]]);
  expect([readOrNull(file("log")), readOrNull(file("c"))]).toEqual(["Lx\nLy\n", null]);
  expect((await s.toolTrack()).map((t) => [t.tool, t.applied])).toEqual([["note_line", true]]);
  expect((await s.toolTrack({ branchId: root })).map((t) => t.applied)).toEqual([true, false]);
});

// A move with files: a call the restored snapshot holds (left applied off its lineage when it was taken) was applied
// again after a call the move undoes. It is undone first, then that call, and the snapshot's files bring it back
// (marked applied, not run).
it("a 'both' move undoes a held call applied after one it undoes first, and its files bring it back", async () => {
  const ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  const inWs = (rel: string) => path.join(ws, rel);
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const { start, root, lx } = await otherAppendLeftApplied(s, inWs);
  const held = await s.checkpoint({ name: "held" });
  await s.invoke("flaky_write", { path: inWs("x"), text: "x" });
  const x = (await s.toolTrack()).find((t) => t.tool === "flaky_write")!;
  // x's undo fails twice ("continue"), so Lx is undone and replayed while x stays applied under it.
  control.failUndo = true;
  await s.rollback(start.id, { onUndoError: "continue" });
  await s.switchBranch(root, { onUndoError: "continue" });
  control.failUndo = false;
  const [again, c] = await s.toolTrack();
  expect([again!.applied, c!.applied, readOrNull(inWs("log"))]).toEqual([true, true, "Lx\n"]);

  const moved = await s.rollback(held.id, { scope: "both" });
  expect(idsOf(moved.undone)).toEqual([c!.id, lx.id, x.id]);
  expect(moved.replayed).toEqual([]);
  expect([readOrNull(inWs("log")), readOrNull(inWs("x")), readOrNull(inWs("c"))]).toEqual(["Lx\n", null, null]);
  expect((await s.toolTrack({ branchId: root })).map((t) => t.applied)).toEqual([true, false]);
  expect((await s.toolTrack({ branchId: x.branchId })).find((t) => t.id === x.id)!.applied).toBe(false);
});

// Under "continue", the later call whose undo fails stays applied on top: the undo under it is not run either (failed,
// with why), and once its undo works the same move does it all.
it("under 'continue', a later call whose undo fails keeps the one under it from being undone", async () => {
  const s = await fp.createSession({ userId: "u" });
  const { other, lx } = await otherAppendLeftApplied(s);
  await s.invoke("flaky_write", { path: file("log"), text: "Y" });
  const y = (await s.toolTrack())[0]!;

  control.failUndo = true;
  const moved = await s.switchBranch(other, { onUndoError: "continue" });
  control.failUndo = false;
  expect([moved.undone, moved.replayed]).toEqual([[], []]);
  expect(moved.failed.map((f) => [f.step, f.invocation.id])).toEqual([
    ["undo", y.id],
    ["undo", lx.id],
    ["replay", y.id],
  ]);
  expect(moved.failed[1]!.error).toContain(y.id);
  expect(readOrNull(file("log"))).toBe("Y");
  expect((await s.toolTrack())[0]!.applied).toBe(true);

  const again = await s.switchBranch(other);
  expect([idsOf(again.undone), idsOf(again.replayed)]).toEqual([[y.id, lx.id], [y.id]]);
  expect(readOrNull(file("log"))).toBe("Y");
});
