// Rollback: a new branch forked at a checkpoint becomes current; everything recorded before stays as it was.
import { describe, expect, it } from "vitest";
import { rowDelta, tempDatabases, type Dump } from "../helpers.js";
import { countRowsOf, dumpOf } from "../fixtures/backend.js";

const dbs = tempDatabases();

/** Every row of `before` is still present, unchanged, in `after` (the sessions table's HEAD pointer aside). */
function expectOnlyAdditions(before: Dump, after: Dump): void {
  for (const [table, rows] of Object.entries(before)) {
    if (table === "sessions") continue;
    const now = new Set((after[table] ?? []).map((r) => JSON.stringify(r)));
    for (const row of rows) expect(now.has(JSON.stringify(row)), `${table} row changed or vanished: ${JSON.stringify(row)}`).toBe(true);
  }
}

describe("rollback", () => {
  it("creates a new branch forked at the checkpoint, makes it current, and reports no tool effects", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const root = (await s.info()).currentBranchId;
    await s.append([
      { role: "user", content: "1" },
      { role: "assistant", content: "2" },
    ]);
    const cp = await s.checkpoint({ name: "two" });
    await s.append({ role: "user", content: "3" });

    const result = await s.rollback(cp.id);
    expect(result).toEqual({
      branch: expect.objectContaining({ parentId: root, forkCheckpointId: cp.id, forkPosition: 2, current: true, head: 2 }),
      undone: [],
      replayed: [],
      skipped: [],
      unregistered: [],
      failed: [],
      unknown: [],
    });
    expect(result.branch.id).not.toBe(root);
    expect((await s.info()).currentBranchId).toBe(result.branch.id);
  });

  it("shows the history up to the checkpoint, and new messages continue from its position on the new branch", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const kept = await s.append([
      { role: "user", content: "1" },
      { role: "assistant", content: "2" },
    ]);
    const cp = await s.checkpoint();
    await s.append([
      { role: "user", content: "3" },
      { role: "assistant", content: "4" },
    ]);
    const { branch } = await s.rollback(cp.id);
    expect(await s.history()).toEqual(kept);
    const [next] = await s.append({ role: "user", content: "3'" });
    expect(next).toMatchObject({ position: 3, branchId: branch.id });
  });

  it("leaves the original branch untouched: its history is identical before and after, and no stored row changes", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const root = (await s.info()).currentBranchId;
    await s.append([
      { role: "user", content: "1" },
      { role: "assistant", content: "2" },
    ]);
    await s.setState({ v: 1 });
    const cp = await s.checkpoint();
    await s.append({ role: "user", content: "3" });
    await s.setState({ v: 2 });
    const historyBefore = await s.history({ branchId: root });
    const dumpBefore = await dumpOf(path);

    await s.rollback(cp.id);
    await s.append({ role: "user", content: "other" });
    await s.setState({ v: 3 });

    expect(await s.history({ branchId: root })).toEqual(historyBefore);
    expectOnlyAdditions(dumpBefore, await dumpOf(path));
    await s.switchBranch(root);
    expect(await s.getState()).toEqual({ v: 2 });
  });

  it("to a checkpoint on a non-current branch forks from that branch", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const root = (await s.info()).currentBranchId;
    await s.append({ role: "user", content: "1" });
    const cpRoot = await s.checkpoint();
    await s.append({ role: "user", content: "2 on root" });
    const cpRoot2 = await s.checkpoint();

    const { branch: b } = await s.rollback(cpRoot.id);
    await s.append({ role: "user", content: "2 on b" });
    const cpB = await s.checkpoint();

    // from b, back to the root's later checkpoint (root is not current)
    const { branch: c } = await s.rollback(cpRoot2.id);
    expect(c).toMatchObject({ parentId: root, forkCheckpointId: cpRoot2.id, forkPosition: 2 });
    expect((await s.history()).map((m) => m.content)).toEqual(["1", "2 on root"]);

    // from c, to b's checkpoint (b is not current)
    const { branch: d } = await s.rollback(cpB.id);
    expect(d).toMatchObject({ parentId: b.id, forkCheckpointId: cpB.id, forkPosition: 2 });
    expect((await s.history()).map((m) => m.content)).toEqual(["1", "2 on b"]);
  });

  it("twice to the same checkpoint, with something written in between, creates two distinct sibling branches", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "user", content: "1" });
    const cp = await s.checkpoint();
    await s.append({ role: "assistant", content: "2" });
    const first = await s.rollback(cp.id);
    await s.append({ role: "assistant", content: "2'" });
    const second = await s.rollback(cp.id);
    expect(second.branch.id).not.toBe(first.branch.id);
    expect(second.branch.parentId).toBe(first.branch.parentId);
    expect((await s.branches()).length).toBe(3);
  });

  it("to a checkpoint at position 0 starts an empty branch with the state {}", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const cp = await s.checkpoint();
    await s.append({ role: "user", content: "1" });
    await s.setState({ x: 1 });
    const { branch } = await s.rollback(cp.id);
    expect(branch.forkPosition).toBe(0);
    expect(await s.history()).toEqual([]);
    expect(await s.getState()).toEqual({});
  });

  it("adds O(1) rows: no entries, no checkpoints, one branch", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.append(Array.from({ length: 200 }, (_, i) => ({ role: "user", content: `m${i}` })));
    const cp = await s.checkpoint();
    await s.append(Array.from({ length: 200 }, (_, i) => ({ role: "user", content: `n${i}` })));
    const before = await countRowsOf(path);
    await s.rollback(cp.id);
    const delta = rowDelta(before, await countRowsOf(path));
    expect(delta.entries).toBe(0);
    expect(delta.checkpoints).toBe(0);
    expect(delta.state_snapshots).toBe(0);
    expect(delta.branches).toBe(1);
    expect(Object.values(delta).reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(3);
  });

  it("keeps the checkpoint it forked from as the branch's forkCheckpointId, which restores as before", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "user", content: "1" });
    const cp = await s.checkpoint();
    const before = await s.restore(cp.id);
    await s.append({ role: "assistant", content: "later" });
    const { branch } = await s.rollback(cp.id);
    await s.append({ role: "user", content: "2" });
    expect(branch.forkCheckpointId).toBe(cp.id);
    expect(await s.restore(cp.id)).toEqual(before);
  });
});
