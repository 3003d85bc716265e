// When an undo (or a replay) throws: the `stop` policy (default) and the `continue` policy.
import { afterEach, describe, expect, it } from "vitest";
import { ToolReplayError, ToolUndoError, type FailedStep, type ToolInvocation } from "../../src/index.js";
import { readOrNull } from "../fixtures/file-tools.js";
import { ids, openWorld, rows, successfulUndos, type World } from "../fixtures/harness.js";

let w: World;
afterEach(async () => {
  await w?.close();
});

/** cp0, then write_file f1, flaky_write f2, write_file f3 (f1..f3 start absent). */
async function threeWrites(world: World) {
  const f1 = world.file("f1");
  const f2 = world.file("f2");
  const f3 = world.file("f3");
  const cp0 = await world.s.checkpoint({ name: "start" });
  await world.s.invoke("write_file", { path: f1, text: "one" });
  await world.s.invoke("flaky_write", { path: f2, text: "two" });
  await world.s.invoke("write_file", { path: f3, text: "three" });
  const track = await world.s.toolTrack();
  const root = (await world.s.info()).currentBranchId;
  return { f1, f2, f3, cp0, track, root };
}

async function catchError(p: Promise<unknown>): Promise<unknown> {
  try {
    await p;
  } catch (error) {
    return error;
  }
  throw new Error("expected the promise to reject");
}

describe("stop policy (default)", () => {
  it("throws ToolUndoError naming the invocation and carrying what was undone; no branch, current unchanged", async () => {
    w = await openWorld();
    const { f1, f2, f3, cp0, track, root } = await threeWrites(w);
    const [w1, w2, w3] = track as [ToolInvocation, ToolInvocation, ToolInvocation];
    w.control.failUndo = true;

    const error = await catchError(w.s.rollback(cp0.id));
    expect(error).toBeInstanceOf(ToolUndoError);
    const e = error as ToolUndoError;
    expect(e.code).toBe("UNDO_FAILED");
    expect(e.invocationId).toBe(w2.id);
    expect(e.tool).toBe("flaky_write");
    expect(e.message).toContain(w2.id);
    expect(ids(e.undone as ToolInvocation[])).toEqual([w3.id]);
    expect(e.replayed).toEqual([]);
    expect((e.failed as FailedStep[]).map((f) => [f.invocation.id, f.step])).toEqual([[w2.id, "undo"]]);

    // nothing changed but the world it already moved
    expect((await w.s.branches()).map((b) => b.id)).toEqual([root]);
    expect((await w.s.info()).currentBranchId).toBe(root);
    expect(readOrNull(f3)).toBeNull();
    expect(readOrNull(f2)).toBe("two");
    expect(readOrNull(f1)).toBe("one");
    expect((await w.s.toolTrack()).map((t) => [t.id, t.applied])).toEqual([
      [w1.id, true],
      [w2.id, true],
      [w3.id, false],
    ]);
    expect((await rows<{ status: string }>(w.dbPath, "SELECT status FROM moves")).map((r) => r.status)).toEqual(["failed"]);
    // the journal records exactly how far it got
    expect(await rows(w.dbPath, `SELECT op, entry_id AS "entryId", status FROM move_steps ORDER BY idx`)).toEqual([
      { op: "undo", entryId: w3.id, status: "done" },
      { op: "undo", entryId: w2.id, status: "failed" },
      { op: "undo", entryId: w1.id, status: "pending" },
    ]);
  });

  it("calling the same rollback again continues from there, nothing undone twice", async () => {
    w = await openWorld();
    const { f1, f2, f3, cp0, track, root } = await threeWrites(w);
    const [w1, w2, w3] = track as [ToolInvocation, ToolInvocation, ToolInvocation];
    w.control.failUndo = true;
    await expect(w.s.rollback(cp0.id)).rejects.toBeInstanceOf(ToolUndoError);

    // still broken: it stops at the same place, having undone nothing more
    const second = (await catchError(w.s.rollback(cp0.id))) as ToolUndoError;
    expect(second).toBeInstanceOf(ToolUndoError);
    expect(second.invocationId).toBe(w2.id);
    expect(second.undone).toEqual([]);
    expect((await w.s.branches()).length).toBe(1);

    // fixed: it finishes
    w.control.failUndo = false;
    const done = await w.s.rollback(cp0.id);
    expect(ids(done.undone)).toEqual([w2.id, w1.id]);
    expect(done.failed).toEqual([]);
    expect(done.branch.parentId).toBe(root);
    expect(done.branch.forkCheckpointId).toBe(cp0.id);
    expect((await w.s.info()).currentBranchId).toBe(done.branch.id);
    expect((await w.s.branches()).length).toBe(2);
    expect([readOrNull(f1), readOrNull(f2), readOrNull(f3)]).toEqual([null, null, null]);

    const undos = successfulUndos(w.calls);
    expect([undos.get(w1.id), undos.get(w2.id), undos.get(w3.id)]).toEqual([1, 1, 1]);
    expect(w.calls.filter((c) => c.op === "undo" && !c.ok).map((c) => c.invocationId)).toEqual([w2.id, w2.id]);
  });

  it("a replay that throws raises ToolReplayError (REPLAY_FAILED) and leaves the current branch; retrying finishes", async () => {
    w = await openWorld();
    const a = w.file("a");
    const b = w.file("b");
    const c = w.file("c");
    const cp0 = await w.s.checkpoint();
    await w.s.invoke("write_file", { path: a, text: "A" });
    await w.s.invoke("flaky_write", { path: b, text: "B" });
    await w.s.invoke("write_file", { path: c, text: "C" });
    const root = (await w.s.info()).currentBranchId;
    const [ra, rb, rc] = (await w.s.toolTrack()) as [ToolInvocation, ToolInvocation, ToolInvocation];
    const other = await w.s.rollback(cp0.id);

    w.control.failRun = true;
    const error = (await catchError(w.s.switchBranch(root))) as ToolReplayError;
    expect(error).toBeInstanceOf(ToolReplayError);
    expect(error.code).toBe("REPLAY_FAILED");
    expect(error.invocationId).toBe(rb.id);
    expect(ids(error.replayed as ToolInvocation[])).toEqual([ra.id]);
    expect((await w.s.info()).currentBranchId).toBe(other.branch.id);
    expect([readOrNull(a), readOrNull(b), readOrNull(c)]).toEqual(["A", null, null]);

    w.control.failRun = false;
    const done = await w.s.switchBranch(root);
    expect(ids(done.replayed)).toEqual([rb.id, rc.id]);
    expect((await w.s.info()).currentBranchId).toBe(root);
    expect([readOrNull(a), readOrNull(b), readOrNull(c)]).toEqual(["A", "B", "C"]);
    const replays = w.calls.filter((x) => x.op === "run" && x.replay && x.ok).map((x) => x.invocationId);
    expect(replays).toEqual([ra.id, rb.id, rc.id]);
  });
});

describe("continue policy", () => {
  it("reports every failure and completes the move", async () => {
    w = await openWorld();
    const files = ["f1", "f2", "f3", "f4", "f5"].map((n) => w.file(n));
    const cp0 = await w.s.checkpoint();
    await w.s.invoke("write_file", { path: files[0]!, text: "1" });
    await w.s.invoke("flaky_write", { path: files[1]!, text: "2" });
    await w.s.invoke("write_file", { path: files[2]!, text: "3" });
    await w.s.invoke("flaky_write", { path: files[3]!, text: "4" });
    await w.s.invoke("write_file", { path: files[4]!, text: "5" });
    const root = (await w.s.info()).currentBranchId;
    const t = (await w.s.toolTrack()) as ToolInvocation[];
    w.control.failUndo = true;

    const moved = await w.s.rollback(cp0.id, { onUndoError: "continue" });
    expect(ids(moved.undone)).toEqual([t[4]!.id, t[2]!.id, t[0]!.id]);
    expect(moved.failed.map((f) => [f.invocation.id, f.step])).toEqual([
      [t[3]!.id, "undo"],
      [t[1]!.id, "undo"],
    ]);
    for (const f of moved.failed) expect(f.error).toContain("flaky_write cannot undo");
    expect(moved.branch.parentId).toBe(root);
    expect((await w.s.info()).currentBranchId).toBe(moved.branch.id);
    expect(files.map(readOrNull)).toEqual([null, "2", null, "4", null]);
    // the failed ones are still applied (their effect is still out there)
    const onRoot = await w.s.toolTrack({ branchId: root });
    expect(onRoot.map((x) => x.applied)).toEqual([false, true, false, true, false]);
  });
});
