// A failed atomic block's writes on another branch than the one it began on: that branch is entered as before the block.
import { describe, expect, it } from "vitest";
import type { SessionHandle } from "../../src/index.js";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { worldPut } from "../fixtures/world-put.js";

const dbs = tempDatabases();
const { world, runs, put } = worldPut();

const contents = async (s: SessionHandle, branchId?: string) =>
  (await s.history(branchId ? { branchId } : undefined)).map((m) => m.content);
const at = async (s: SessionHandle) => (await s.info()).currentBranchId;

/** A session on A (q, a1) with X, a version of the answer (q, a2, x-followup) that ran put x; the session back on A. */
async function fresh() {
  world.clear();
  const { fp, path } = dbs.open({ tools: [put] });
  const s = await fp.createSession({ userId: "u" });
  await s.append({ role: "user", content: "q" });
  await s.append({ role: "assistant", content: "a1" });
  const a = await at(s);
  const x = (await s.edit((await s.history())[1]!.id, { content: "a2" })).branch.id;
  await s.invoke("put", { k: "x", v: "X" });
  await s.append({ role: "user", content: "x-followup" });
  await s.switchBranch(a);
  runs.length = 0;
  return { fp, path, s, a, x };
}

/** The block moves to X, writes a call and a message there, then throws. */
const onX = (s: SessionHandle, x: string) => async () => {
  await s.switchBranch(x);
  await s.invoke("put", { k: "blk", v: "1" });
  await s.append({ role: "assistant", content: "blk-on-X" });
  throw new Error("block failed");
};

describe("a failed atomic block's writes on another branch", () => {
  it("plan and switchBranch to it land on it as before the block, on one fork each time", async () => {
    const { s, x } = await fresh();
    await rejectionOf(s.atomic(onX(s, x)));
    const r = await at(s);
    expect(await contents(s)).toEqual(["q", "a1"]);
    expect(world.has("blk")).toBe(false);
    runs.length = 0;
    const plan = await s.plan({ branchId: x });
    const moved = await s.switchBranch(x);
    expect(moved.branch.id).not.toBe(r);
    expect(moved.branch.id).not.toBe(x);
    expect(plan.branch.parentId).toBe(x);
    expect(moved.branch.parentId).toBe(x);
    expect(await contents(s)).toEqual(["q", "a2", "x-followup"]);
    expect(Object.fromEntries(world)).toEqual({ x: "X" });
    expect(runs).toEqual(["x"]);
    // The branch keeps the block's writes as history; a later move to it lands on the same fork, replaying none of them.
    expect(await contents(s, x)).toEqual(["q", "a2", "x-followup", "blk-on-X"]);
    const fork = moved.branch.id;
    await s.switchBranch(r);
    runs.length = 0;
    expect((await s.plan({ branchId: x })).branch.id).toBe(fork);
    expect((await s.switchBranch(x)).branch.id).toBe(fork);
    expect(await contents(s)).toEqual(["q", "a2", "x-followup"]);
    expect(runs).toEqual(["x"]);
    expect(world.has("blk")).toBe(false);
  });

  it("undo of the user's switch before the block lands on the branch the block wrote on as before the block", async () => {
    const { s, a, x } = await fresh();
    await s.switchBranch(x);
    // The block begins on X, moves to A and writes there.
    await rejectionOf(
      s.atomic(async () => {
        await s.switchBranch(a);
        await s.invoke("put", { k: "blk", v: "1" });
        await s.append({ role: "assistant", content: "blk-on-A" });
        throw new Error("block failed");
      }),
    );
    expect(await contents(s)).toEqual(["q", "a2", "x-followup"]);
    // Undo of the user's switch to X: back on A as before the block, not on the rollback's branch (X's conversation).
    await s.undo();
    expect(await contents(s)).toEqual(["q", "a1"]);
    expect(Object.fromEntries(world)).toEqual({});
    expect(await contents(s, a)).toEqual(["q", "a1", "blk-on-A"]);
  });

  it("the start branch still lands on the rollback's branch; another opener entering X writes on the fork", async () => {
    const { path, s, a, x } = await fresh();
    await rejectionOf(
      s.atomic(async () => {
        await s.append({ role: "user", content: "blk-on-A" });
        await onX(s, x)();
      }),
    );
    const r = await at(s);
    expect((await s.switchBranch(a)).branch.id).toBe(r);
    expect(await contents(s)).toEqual(["q", "a1"]);
    const t = await dbs.open({ tools: [put], path }).fp.getSession(s.id, { userId: "u" });
    await t.switchBranch(x);
    const landed = await at(t);
    expect(landed).not.toBe(x);
    // Written on the fork the move made (as before the block), not on X.
    await t.append({ role: "user", content: "later" });
    expect(await contents(t)).toEqual(["q", "a2", "x-followup", "later"]);
    expect(await contents(t, x)).toEqual(["q", "a2", "x-followup", "blk-on-X"]);
  });

  it("a second failed block on it (its retry) leaves it entered as before both, by a switch or an undo", async () => {
    const { s, a, x } = await fresh();
    await rejectionOf(s.atomic(onX(s, x)));
    await rejectionOf(s.atomic(onX(s, x))); // enters X on a fork of it, writes there, fails again
    expect([await contents(s), [...world.keys()]]).toEqual([["q", "a1"], []]);
    runs.length = 0;
    await s.switchBranch(x);
    expect([await contents(s), [...world.keys()], runs]).toEqual([["q", "a2", "x-followup"], ["x"], ["x"]]);
    await s.undo(); // back to a
    await s.redo(); // the switch to X again: where both blocks never ran
    expect([await contents(s), [...world.keys()]]).toEqual([["q", "a2", "x-followup"], ["x"]]);
    await s.switchBranch(a);
    // An undo inside the block makes that fork too.
    await rejectionOf(
      s.atomic(async () => {
        await s.undo(); // the switch back to a: to X
        await s.invoke("put", { k: "blk", v: "2" });
        throw new Error("block failed");
      }),
    );
    await s.undo();
    expect([await contents(s), [...world.keys()]]).toEqual([["q", "a2", "x-followup"], ["x"]]);
  });

  it("one with nothing of its own yet (a rollback's branch) is entered as it was, by a redo or a switch", async () => {
    world.clear();
    const { fp } = dbs.open({ tools: [put] });
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "q" });
    const cp = await s.checkpoint({ name: "before the answer" });
    await s.invoke("put", { k: "x", v: "X" });
    await s.append({ role: "assistant", content: "a1" });
    const rolled = (await s.rollback(cp.id)).branch.id; // the user's rollback: q alone, x undone
    await s.undo(); // back to q, a1; the rollback can be redone
    await rejectionOf(
      s.atomic(async () => {
        await s.redo(); // to the rollback's branch, which has nothing of its own
        await s.invoke("put", { k: "blk", v: "1" });
        await s.append({ role: "assistant", content: "blk" });
        throw new Error("block failed");
      }),
    );
    expect([await contents(s), [...world.keys()]]).toEqual([["q", "a1"], ["x"]]);
    await s.redo(); // the user's rollback again: where the block never ran
    expect([await contents(s), [...world.keys()]]).toEqual([["q"], []]);
    await s.undo();
    expect([await contents(s), [...world.keys()]]).toEqual([["q", "a1"], ["x"]]);
    await s.switchBranch(rolled);
    expect([await contents(s), [...world.keys()]]).toEqual([["q"], []]);
    expect(await contents(s, rolled)).toEqual(["q", "blk"]);
  });
});
