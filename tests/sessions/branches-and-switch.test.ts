// The branches of a session form a tree; switchBranch makes another branch current without copying anything.
import { describe, expect, it } from "vitest";
import { branchTree } from "../../src/index.js";
import { rowDelta, tempDatabases } from "../helpers.js";
import { countRowsOf } from "../fixtures/backend.js";

const dbs = tempDatabases();

describe("branches", () => {
  it("of a new session is one root: no parent, no fork checkpoint, fork position 0, current", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    expect(await s.branches()).toEqual([
      {
        id: (await s.info()).currentBranchId,
        sessionId: s.id,
        parentId: null,
        forkCheckpointId: null,
        forkPosition: 0,
        name: null,
        reason: "root",
        head: 0,
        current: true,
        createdAt: expect.any(Date),
      },
    ]);
  });

  it("after rollbacks and edits form a tree with parentId, forkCheckpointId and forkPosition, exactly one current", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const root = (await s.info()).currentBranchId;
    const [m1, m2] = await s.append([
      { role: "user", content: "1" },
      { role: "assistant", content: "2" },
    ]);
    const cp1 = await s.checkpoint();
    await s.append({ role: "user", content: "3" });

    const r = await s.rollback(cp1.id); // child of root at 2
    await s.append({ role: "user", content: "3 on r" });
    const e = await s.edit(m2!.id, { role: "assistant", content: "2'" }); // child of root at 1
    const e2 = await s.edit(m1!.id, { role: "user", content: "1'" }); // child of root at 0

    const list = await s.branches();
    expect(list.map((b) => b.id)).toEqual([root, r.branch.id, e.branch.id, e2.branch.id]);
    expect(list.map((b) => [b.parentId, b.forkCheckpointId, b.forkPosition])).toEqual([
      [null, null, 0],
      [root, cp1.id, 2],
      [root, null, 1],
      [root, null, 0],
    ]);
    expect(list.filter((b) => b.current).map((b) => b.id)).toEqual([e2.branch.id]);
    expect(list.map((b) => b.head)).toEqual([3, 3, 2, 1]);

    const tree = branchTree(list);
    expect(tree).toHaveLength(1);
    expect(tree[0]!.id).toBe(root);
    expect(tree[0]!.children.map((c) => c.id)).toEqual([r.branch.id, e.branch.id, e2.branch.id]);
  });

  it("nests grandchildren under their parent", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "user", content: "1" });
    const one = await s.checkpoint();
    await s.append({ role: "assistant", content: "left on the root" });
    const a = await s.rollback(one.id);
    await s.append({ role: "user", content: "2" });
    const two = await s.checkpoint();
    await s.append({ role: "assistant", content: "left on a" });
    const b = await s.rollback(two.id);
    const tree = branchTree(await s.branches());
    expect(tree[0]!.children[0]!.id).toBe(a.branch.id);
    expect(tree[0]!.children[0]!.children[0]!.id).toBe(b.branch.id);
    expect(b.branch.parentId).toBe(a.branch.id);
  });
});

describe("switchBranch", () => {
  it("makes the branch current: info, branches(), history, state and appends all follow it", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const root = (await s.info()).currentBranchId;
    await s.append([
      { role: "user", content: "1" },
      { role: "assistant", content: "2" },
    ]);
    await s.setState({ on: "root" });
    const cp = await s.checkpoint();
    await s.append({ role: "user", content: "3 on root" });
    const { branch } = await s.rollback(cp.id);
    await s.setState({ on: "branch" });

    const result = await s.switchBranch(root);
    expect(result).toEqual({
      branch: expect.objectContaining({ id: root, current: true }),
      undone: [],
      replayed: [],
      skipped: [],
      unregistered: [],
      failed: [],
      unknown: [],
    });
    expect((await s.info()).currentBranchId).toBe(root);
    expect((await s.branches()).filter((b) => b.current).map((b) => b.id)).toEqual([root]);
    expect((await s.history()).map((m) => m.content)).toEqual(["1", "2", "3 on root"]);
    expect(await s.getState()).toEqual({ on: "root" });
    const [m] = await s.append({ role: "assistant", content: "4 on root" });
    expect(m).toMatchObject({ branchId: root, position: 5 });

    await s.switchBranch(branch.id);
    expect((await s.history()).map((m) => m.content)).toEqual(["1", "2"]);
    expect(await s.getState()).toEqual({ on: "branch" });
  });

  it("copies nothing: no entry, branch or checkpoint rows are added", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const root = (await s.info()).currentBranchId;
    await s.append(Array.from({ length: 50 }, (_, i) => ({ role: "user", content: `m${i}` })));
    const { branch } = await s.rollback((await s.checkpoint()).id);
    const before = await countRowsOf(path);
    await s.switchBranch(root);
    await s.switchBranch(branch.id);
    const delta = rowDelta(before, await countRowsOf(path));
    expect(delta).toMatchObject({ entries: 0, branches: 0, checkpoints: 0, state_snapshots: 0 });
  });

  it("to the branch that is already current keeps it current and changes no history", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    const root = (await s.info()).currentBranchId;
    await s.append({ role: "user", content: "1" });
    const result = await s.switchBranch(root);
    expect(result.branch.id).toBe(root);
    expect((await s.history()).map((m) => m.content)).toEqual(["1"]);
  });
});
