// Moves clicked twice: a rollback to where the session already is, or a switch to the current branch, changes nothing.
import { describe, expect, it } from "vitest";
import { defineTool, type ForkpointOptions, type MoveResult } from "../../src/index.js";
import { tempDatabases } from "../helpers.js";
import { countRowsOf } from "../fixtures/backend.js";

const dbs = tempDatabases();

/** A world of keys; `put` sets one, its undo removes it (and fails while `failUndo` is set). */
function world() {
  const keys = new Map<string, string>();
  const flags = { failUndo: false };
  const put = defineTool({
    name: "put",
    run: async ({ key, value }: { key: string; value: string }) => {
      keys.set(key, value);
      return { key };
    },
    undo: async ({ args }) => {
      if (flags.failUndo) throw new Error("undo refused");
      keys.delete(args.key);
    },
  });
  return { keys, flags, put };
}

async function chat(contents: string[], tools: NonNullable<ForkpointOptions["tools"]> = []) {
  const { fp, path } = dbs.open({ tools });
  const s = await fp.createSession({ userId: "alice" });
  const root = (await s.info()).currentBranchId;
  const msgs = await s.append(contents.map((content, i) => ({ role: i % 2 === 0 ? "user" : "assistant", content })));
  return { fp, path, s, root, msgs };
}

const nothingDone = { undone: [], replayed: [], skipped: [], unregistered: [], failed: [], unknown: [] };

describe("idempotent rollback", () => {
  it("a second rollback to the same checkpoint, nothing written since, returns the branch of the first", async () => {
    const { fp, path, s, root } = await chat(["1", "2", "3"]);
    const cp = await s.checkpoint({ name: "three" });
    await s.append({ role: "user", content: "4" });
    const first = await s.rollback(cp.id);
    expect(first.branch).toMatchObject({ parentId: root, forkCheckpointId: cp.id, head: 3 });

    const rollbacks: MoveResult[] = [];
    fp.on("rollback", (r) => void rollbacks.push(r));
    const rows = await countRowsOf(path);
    const second = await s.rollback(cp.id);
    expect(second).toEqual({ branch: first.branch, ...nothingDone });
    expect(await countRowsOf(path)).toEqual(rows); // no branch, no event, nothing for undo
    expect(rollbacks).toEqual([]);
    expect((await s.branches()).length).toBe(2);
    expect((await s.info()).currentBranchId).toBe(first.branch.id);
  });

  it("a rollback to a checkpoint at the current head of the current branch keeps that branch", async () => {
    const { path, s, root } = await chat(["1", "2"]);
    const cp = await s.checkpoint({ name: "here" });
    const rows = await countRowsOf(path);
    const result = await s.rollback(cp.id);
    expect(result).toEqual({ branch: expect.objectContaining({ id: root, head: 2, current: true }), ...nothingDone });
    expect(await countRowsOf(path)).toEqual(rows);
  });

  it("another checkpoint at the same place of the current lineage counts as where the session is", async () => {
    const { s, root } = await chat(["1", "2"]);
    const x = await s.checkpoint({ name: "x" });
    const y = await s.checkpoint({ name: "y" });
    await s.append({ role: "user", content: "3" });
    const fork = await s.rollback(x.id);
    expect((await s.rollback(y.id)).branch.id).toBe(fork.branch.id);
    expect((await s.branches()).map((b) => b.id)).toEqual([root, fork.branch.id]);
  });

  it("a checkpoint at the head's position on another lineage is a real rollback", async () => {
    const { path, s, root } = await chat(["1", "2"]);
    const two = await s.checkpoint({ name: "two" });
    await s.append({ role: "user", content: "3" });
    await s.rollback(two.id);
    await s.append({ role: "user", content: "3'" });
    const other = await s.checkpoint({ name: "other three" }); // position 3, not on the root's lineage
    await s.switchBranch(root);
    const rows = await countRowsOf(path);
    const result = await s.rollback(other.id);
    expect(result.branch.id).not.toBe(root);
    expect(result.branch).toMatchObject({ forkCheckpointId: other.id, forkPosition: 3, head: 3 });
    expect((await countRowsOf(path)).branches).toBe(rows.branches! + 1);
    expect((await s.history()).map((m) => m.content)).toEqual(["1", "2", "3'"]);
  });

  it("a message, a state change or a tool call written since makes a new branch, as before", async () => {
    const w = world();
    const { s, root } = await chat(["1", "2"], [w.put]);
    const cp = await s.checkpoint({ name: "two" });
    const first = await s.rollback(cp.id); // at the head already: the root itself
    expect(first.branch.id).toBe(root);

    await s.append({ role: "user", content: "3" });
    const afterMessage = await s.rollback(cp.id);
    expect(afterMessage.branch.id).not.toBe(first.branch.id);

    await s.setState({ step: 1 });
    const afterState = await s.rollback(cp.id);
    expect(afterState.branch.id).not.toBe(afterMessage.branch.id);
    expect(await s.getState()).toEqual({});

    await s.invoke("put", { key: "a", value: "1" });
    const afterTool = await s.rollback(cp.id);
    expect(afterTool.branch.id).not.toBe(afterState.branch.id);
    expect(afterTool.undone.map((t) => t.tool)).toEqual(["put"]);
    expect(w.keys.has("a")).toBe(false);

    // Now nothing is written since: the next click is idempotent again.
    expect((await s.rollback(cp.id)).branch.id).toBe(afterTool.branch.id);
    expect((await s.branches()).length).toBe(4);
  });

  it("a world whose applied set does not match the checkpoint is moved, on a new branch", async () => {
    const w = world();
    const { s } = await chat(["1"], [w.put]);
    const start = await s.checkpoint({ name: "start" });
    await s.invoke("put", { key: "a", value: "1" });
    // The undo fails and the move goes on ("continue"): the call stays applied on a branch that does not hold it.
    w.flags.failUndo = true;
    const first = await s.rollback(start.id, { onUndoError: "continue" });
    expect(first.failed.map((f) => f.invocation.tool)).toEqual(["put"]);
    expect(w.keys.has("a")).toBe(true);

    w.flags.failUndo = false;
    // The plan says what the move does: a new branch, since the world must move.
    expect((await s.plan({ checkpointId: start.id })).branch.id).toBeNull();
    const second = await s.rollback(start.id);
    expect(second.branch.id).not.toBe(first.branch.id);
    expect(second.undone.map((t) => t.tool)).toEqual(["put"]);
    expect(w.keys.has("a")).toBe(false);
    // Now the world matches: a third click changes nothing.
    expect((await s.plan({ checkpointId: start.id })).branch.id).toBe(second.branch.id);
    expect(await s.rollback(start.id)).toEqual({ branch: second.branch, ...nothingDone });
  });

  it("the plan of a rollback to where the session is names the current branch, as the move keeps it", async () => {
    const { path, s, root } = await chat(["1", "2"]);
    const cp = await s.checkpoint({ name: "here" });
    const rows = await countRowsOf(path);
    const plan = await s.plan({ checkpointId: cp.id });
    expect(plan).toMatchObject({
      branch: { id: root, parentId: null, forkPosition: 0, position: 2 },
      undone: [],
      replayed: [],
      leftBehind: [],
    });
    expect((await s.rollback(cp.id)).branch.id).toBe(plan.branch.id);
    expect(await countRowsOf(path)).toEqual(rows);
    // Once a message is written past it, the plan and the move both make a branch.
    await s.append({ role: "user", content: "3" });
    expect((await s.plan({ checkpointId: cp.id })).branch).toEqual({ id: null, parentId: root, forkPosition: 2, position: 2 });
    expect((await s.rollback(cp.id)).branch.id).not.toBe(root);
  });

  it("is refused for another user's checkpoint and for bad options, with nothing written", async () => {
    const { fp, path, s } = await chat(["1"]);
    const cp = await s.checkpoint();
    const bob = await fp.createSession({ userId: "bob" });
    const rows = await countRowsOf(path);
    await expect(bob.rollback(cp.id)).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(s.rollback(cp.id, { onUndoError: "later" } as never)).rejects.toMatchObject({ code: "VALIDATION_ERROR" });
    expect(await countRowsOf(path)).toEqual(rows);
  });
});

describe("idempotent switchBranch", () => {
  it("a switch to the current branch changes nothing: no event, no row", async () => {
    const { fp, path, s, root } = await chat(["1", "2"]);
    const switches: MoveResult[] = [];
    fp.on("switch", (r) => void switches.push(r));
    const rows = await countRowsOf(path);
    const result = await s.switchBranch(root);
    expect(result).toEqual({ branch: expect.objectContaining({ id: root, head: 2, current: true }), ...nothingDone });
    expect(await countRowsOf(path)).toEqual(rows);
    expect(switches).toEqual([]);
    expect((await s.timeline()).items.filter((i) => i.kind === "switch")).toEqual([]);
  });

  it("a switch to another branch is still a move", async () => {
    const { s, root } = await chat(["1", "2"]);
    const cp = await s.checkpoint();
    await s.append({ role: "user", content: "3" });
    const fork = await s.rollback(cp.id);
    const back = await s.switchBranch(root);
    expect(back.branch).toMatchObject({ id: root, head: 3, current: true });
    expect((await s.switchBranch(fork.branch.id)).branch.id).toBe(fork.branch.id);
  });
});
