// A failed atomic block's branch, its head as the block left it, is entered where the block never ran: by any move.
import { describe, expect, it } from "vitest";
import type { SessionHandle } from "../../src/index.js";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { worldPut } from "../fixtures/world-put.js";

const dbs = tempDatabases();
const { world, runs, put } = worldPut();

/** A block that writes a call and a message, then throws. */
const failing = (s: SessionHandle) => async () => {
  await s.invoke("put", { k: "c", v: "1" });
  await s.append({ role: "assistant", content: "half" });
  throw new Error("block failed");
};

async function fresh() {
  world.clear();
  runs.length = 0;
  const { fp } = dbs.open({ tools: [put] });
  const s = await fp.createSession({ userId: "u" });
  await s.append({ role: "user", content: "q1" });
  const cp0 = await s.checkpoint({ name: "cp0" });
  await s.append({ role: "assistant", content: "a1" });
  return { fp, s, cp0, x: (await s.info()).currentBranchId };
}

const contents = async (s: SessionHandle) => (await s.history()).map((m) => m.content);
const at = async (s: SessionHandle) => (await s.info()).currentBranchId;

describe("a failed atomic block's branch", () => {
  it("switchBranch to it lands where the block's rollback left the session, running none of its calls", async () => {
    const { s, cp0, x } = await fresh();
    await rejectionOf(s.atomic(failing(s)));
    const y = await at(s);
    await s.rollback(cp0.id);
    runs.length = 0;
    const plan = await s.plan({ branchId: x });
    expect(plan.branch.id).toBe(y);
    expect(plan.replayed).toEqual([]);
    const moved = await s.switchBranch(x);
    expect(moved.branch.id).toBe(y);
    expect(await at(s)).toBe(y);
    expect(await contents(s)).toEqual(["q1", "a1"]);
    expect(world.has("c")).toBe(false);
    expect(runs).toEqual([]);
    // From the rollback's branch itself, a switch to the block's branch changes nothing.
    expect((await s.switchBranch(x)).branch.id).toBe(y);
    expect(runs).toEqual([]);
  });

  it("another handle's switch lands there too; a checkpoint on it before the block is still a rollback target", async () => {
    const { fp, s, cp0, x } = await fresh();
    const pre = await s.checkpoint({ name: "pre" });
    await rejectionOf(s.atomic(failing(s)));
    const y = await at(s);
    const t = await fp.getSession(s.id, { userId: "u" });
    expect((await t.switchBranch(x)).branch.id).toBe(y);
    expect(await at(s)).toBe(y);
    await s.rollback(cp0.id);
    const back = await s.rollback(pre.id);
    expect([x, y]).not.toContain(back.branch.id);
    expect(await contents(s)).toEqual(["q1", "a1"]);
    expect(runs).toEqual(["c"]);
  });

  it("an undo of an older move landing at its head comes back to the rollback's branch", async () => {
    const { s, cp0, x } = await fresh();
    const y0 = (await s.rollback(cp0.id)).branch.id;
    await s.switchBranch(x);
    await rejectionOf(s.atomic(failing(s)));
    const r = await at(s);
    runs.length = 0;
    await s.undo(); // the switch back to x
    expect(await at(s)).toBe(y0);
    await s.undo(); // the rollback off x: back to x's head, where the block never ran
    expect(await at(s)).toBe(r);
    expect(await contents(s)).toEqual(["q1", "a1"]);
    expect(world.has("c")).toBe(false);
    await s.redo();
    expect(await at(s)).toBe(y0);
    await s.redo();
    expect(await at(s)).toBe(r);
    expect(runs).toEqual([]);
    expect(world.has("c")).toBe(false);
  });

  it("a move another handle of the opener makes inside the block is the block's: undo and redo never bring it back", async () => {
    const { fp, s, cp0, x } = await fresh();
    const t = await fp.getSession(s.id, { userId: "u" });
    await s.rollback(cp0.id);
    await s.append({ role: "user", content: "q1b" });
    const b = await at(s);
    const block = async () => {
      await s.invoke("put", { k: "c", v: "1" });
      await s.append({ role: "assistant", content: "half" });
      await t.switchBranch(x);
      throw new Error("block failed");
    };
    await rejectionOf(s.atomic(block, { waitMs: 5000 }));
    const r = await at(s);
    expect(r).not.toBe(b);
    expect(await contents(s)).toEqual(["q1", "q1b"]);
    runs.length = 0;
    await s.undo(); // the rollback before the block (the block's switch is no step): back to x
    expect(await at(s)).toBe(x);
    expect(await contents(s)).toEqual(["q1", "a1"]);
    await s.redo(); // the rollback again: to b's head, where the block never ran
    expect(await at(s)).toBe(r);
    expect(await contents(s)).toEqual(["q1", "q1b"]);
    expect(runs).toEqual([]);
    expect(world.has("c")).toBe(false);
  });

  it("a move made inside the block, then the failure: undo and redo never bring the block back", async () => {
    const { s, cp0, x } = await fresh();
    await s.rollback(cp0.id);
    await s.append({ role: "user", content: "q1b" });
    const block = async () => {
      await s.invoke("put", { k: "c", v: "1" });
      await s.rollback(cp0.id);
      await s.invoke("put", { k: "d", v: "1" });
      throw new Error("block failed");
    };
    await rejectionOf(s.atomic(block));
    const r = await at(s);
    runs.length = 0;
    await s.undo(); // the rollback before the block (the one inside it is no step)
    expect(await at(s)).toBe(x);
    expect(await contents(s)).toEqual(["q1", "a1"]);
    await s.redo();
    expect(await at(s)).toBe(r);
    expect(await contents(s)).toEqual(["q1", "q1b"]);
    expect(runs).toEqual([]);
    expect([...world.keys()]).toEqual([]);
  });

  it("another branch the block moved to and wrote on is entered where the block never ran; one it did not write on as ever", async () => {
    const { s, cp0 } = await fresh();
    await s.invoke("put", { k: "a", v: "1" });
    const a = await at(s);
    await s.rollback(cp0.id);
    await s.append({ role: "user", content: "q1b" });
    const block = async () => {
      await s.invoke("put", { k: "c", v: "1" });
      await s.undo(); // back to a, and a write there
      await s.invoke("put", { k: "d", v: "1" });
      throw new Error("block failed");
    };
    await rejectionOf(s.atomic(block));
    const r = await at(s);
    runs.length = 0;
    // Not the branch the block began on: entered as it was before the block (a fork of it there), not as the rollback's.
    const entered = (await s.switchBranch(a)).branch;
    expect(entered.id).not.toBe(r);
    expect(entered.parentId).toBe(a);
    expect(await contents(s)).toEqual(["q1", "a1"]);
    expect(runs).toEqual(["a"]);
    expect([...world.keys()]).toEqual(["a"]);
    await s.switchBranch(r);
    runs.length = 0;
    // A branch the session was only moved to during a failed block (nothing written there) is entered as ever.
    const n = (await s.rollback(cp0.id)).branch.id;
    await s.append({ role: "user", content: "q2" });
    await s.switchBranch(r);
    const blockOnR = async () => {
      await s.invoke("put", { k: "e", v: "1" });
      await s.switchBranch(n);
      throw new Error("block failed");
    };
    await rejectionOf(s.atomic(blockOnR));
    await s.rollback(cp0.id);
    expect((await s.switchBranch(n)).branch.id).toBe(n);
    expect(await contents(s)).toEqual(["q1", "q2"]);
    expect(runs).toEqual(["e"]);
  });

  it("a message written after its last message lands as if the block never ran, never after the block's calls", async () => {
    const { s, cp0, x } = await fresh();
    const a1 = (await s.history()).at(-1)!;
    const callsOnly = async () => {
      await s.invoke("put", { k: "c", v: "1" });
      await s.setState({ c: true });
      throw new Error("block failed");
    };
    await rejectionOf(s.atomic(callsOnly));
    const y = await at(s);
    // The rollback's branch ends at the message too: the message lands there.
    await s.rollback(cp0.id);
    const [onY] = await s.append({ role: "user", content: "next" }, { after: a1.id });
    expect(onY!.branchId).toBe(y);
    // It does not any more: on a branch forked right after the message, the block's calls in no lineage.
    const [alt] = await s.append({ role: "user", content: "alt" }, { after: a1.id });
    expect([x, y]).not.toContain(alt!.branchId);
    runs.length = 0;
    const moved = await s.switchBranch(alt!.branchId);
    expect([moved.branch.id, await contents(s), runs, [...world.keys()], await s.getState()]).toEqual([
      alt!.branchId,
      ["q1", "a1", "alt"],
      [],
      [],
      {},
    ]);
  });

  it("a message written after a message the block wrote itself lands after it, where the block left its branch", async () => {
    const { s, x } = await fresh();
    await rejectionOf(s.atomic(failing(s)));
    const half = (await s.history({ branchId: x })).at(-1)!;
    const [late] = await s.append({ role: "user", content: "late" }, { after: half.id });
    expect(late!.branchId).toBe(x);
  });
});
