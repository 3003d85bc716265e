// A failed atomic block's own rollback is not the user's move: undo takes back the user's last move before the block.
import { describe, expect, it } from "vitest";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { worldPut } from "../fixtures/world-put.js";

const dbs = tempDatabases();
const { world, put } = worldPut();
const fail = () => Promise.reject(new Error("block failed"));

describe("undo after a failed atomic block", () => {
  it("takes back the user's last move when the block wrote nothing", async () => {
    world.clear();
    const { fp } = dbs.open({ tools: [put] });
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "q1" });
    const cp = await s.checkpoint({ name: "cp0" });
    await s.invoke("put", { k: "a", v: "1" });
    const before = (await s.info()).currentBranchId;
    await s.rollback(cp.id);
    await s.append({ role: "user", content: "q1b" });
    expect(world.has("a")).toBe(false);
    await rejectionOf(s.atomic(fail));
    await s.undo();
    expect((await s.info()).currentBranchId).toBe(before);
    expect(world.get("a")).toBe("1");
  });

  it("does not run the block's calls again: the block is as if it never ran", async () => {
    world.clear();
    const { fp } = dbs.open({ tools: [put] });
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "q" });
    await s.invoke("put", { k: "b", v: "1" });
    const block = async () => {
      await s.invoke("put", { k: "c", v: "1" });
      await s.append({ role: "assistant", content: "half" });
      return fail();
    };
    await rejectionOf(s.atomic(block));
    expect([...world.keys()]).toEqual(["b"]);
    expect((await rejectionOf(s.undo())).code).toBe("NOTHING_TO_UNDO");
    expect([...world.keys()]).toEqual(["b"]);
    expect((await s.history()).map((m) => m.content)).toEqual(["q"]);
  });

  it("a nested block that failed leaves undo with nothing of it to take back", async () => {
    world.clear();
    const { fp } = dbs.open({ tools: [put] });
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "t" });
    await s.atomic(async () => {
      await s.invoke("put", { k: "o", v: "1" });
      await rejectionOf(s.atomic(async () => s.invoke("put", { k: "i", v: "1" }).then(fail)));
      await s.invoke("put", { k: "o2", v: "1" });
    });
    expect((await rejectionOf(s.undo())).code).toBe("NOTHING_TO_UNDO");
    expect(Object.fromEntries(world)).toEqual({ o: "1", o2: "1" });
    expect((await s.toolTrack()).map((t) => t.args)).toEqual([
      { k: "o", v: "1" },
      { k: "o2", v: "1" },
    ]);
  });
});

describe("redo and undo across a failed atomic block", () => {
  it("redo after undo goes back to where the failed block left the session, not to the block's writes", async () => {
    world.clear();
    const { fp } = dbs.open({ tools: [put] });
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "q1" });
    const cp = await s.checkpoint({ name: "cp0" });
    await s.invoke("put", { k: "a", v: "1" });
    await s.rollback(cp.id);
    await s.append({ role: "user", content: "q1b" });
    const block = async () => {
      await s.invoke("put", { k: "c", v: "1" });
      await s.append({ role: "assistant", content: "half" });
      return fail();
    };
    await rejectionOf(s.atomic(block));
    const afterBlock = (await s.info()).currentBranchId;
    await s.undo();
    expect(Object.fromEntries(world)).toEqual({ a: "1" });
    await s.redo();
    expect((await s.info()).currentBranchId).toBe(afterBlock);
    expect(Object.fromEntries(world)).toEqual({});
    expect((await s.history()).map((m) => m.content)).toEqual(["q1", "q1b"]);
    // And undo again takes the same move back.
    await s.undo();
    expect(Object.fromEntries(world)).toEqual({ a: "1" });
    expect((await s.history()).map((m) => m.content)).toEqual(["q1"]);
  });

  it("undo after redo goes back to where a failed block left the session after the first undo", async () => {
    world.clear();
    const { fp } = dbs.open({ tools: [put] });
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "q1" });
    const cp = await s.checkpoint({ name: "cp0" });
    await s.invoke("put", { k: "a", v: "1" });
    await s.rollback(cp.id);
    await s.undo();
    expect(Object.fromEntries(world)).toEqual({ a: "1" });
    const block = async () => {
      await s.invoke("put", { k: "c", v: "1" });
      await s.append({ role: "assistant", content: "half" });
      return fail();
    };
    await rejectionOf(s.atomic(block));
    const afterBlock = (await s.info()).currentBranchId;
    expect(Object.fromEntries(world)).toEqual({ a: "1" });
    await s.redo();
    expect(Object.fromEntries(world)).toEqual({});
    await s.undo();
    expect((await s.info()).currentBranchId).toBe(afterBlock);
    expect(Object.fromEntries(world)).toEqual({ a: "1" });
    expect((await s.history()).map((m) => m.content)).toEqual(["q1"]);
  });

  it("a move that stayed, then a failed block: undo and redo stay where the block left the session", async () => {
    world.clear();
    const { fp } = dbs.open({ tools: [put] });
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "q1" });
    const cp = await s.checkpoint({ name: "cp0" });
    await s.invoke("put", { k: "a", v: "1" });
    await s.rollback(cp.id);
    const b1 = (await s.info()).currentBranchId;
    await s.append({ role: "user", content: "q1b" });
    await s.switchBranch(b1); // stays: a move of the history
    const block = async () => {
      await s.invoke("put", { k: "c", v: "1" });
      await s.append({ role: "assistant", content: "half" });
      return fail();
    };
    await rejectionOf(s.atomic(block));
    const afterBlock = (await s.info()).currentBranchId;
    const seen = async () => [Object.fromEntries(world), (await s.history()).map((m) => m.content), (await s.info()).currentBranchId];
    const here = [{}, ["q1", "q1b"], afterBlock];
    await s.undo(); // takes back the stay
    expect(await seen()).toEqual(here);
    await s.undo(); // takes back the rollback
    expect(Object.fromEntries(world)).toEqual({ a: "1" });
    await s.redo();
    expect(await seen()).toEqual(here);
    await s.redo();
    expect(await seen()).toEqual(here);
  });

  it("a rollback clicked again after the block is still a second click: undo takes back the first", async () => {
    world.clear();
    const { fp } = dbs.open({ tools: [put] });
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "q1" });
    const cp = await s.checkpoint({ name: "cp0" });
    await s.invoke("put", { k: "a", v: "1" });
    const before = (await s.info()).currentBranchId;
    await s.rollback(cp.id);
    await rejectionOf(
      s.atomic(async () => {
        await s.setState({ half: true });
        throw new Error("block failed");
      }),
    );
    await s.rollback(cp.id); // the session is there already: nothing moves
    expect([await s.getState(), world.has("a")]).toEqual([{}, false]);
    await s.undo(); // the user's rollback, not the second click's stay
    expect((await s.info()).currentBranchId).toBe(before);
    expect(world.get("a")).toBe("1");
  });

  it("an undo and then a move inside the block leave the user's history as it was", async () => {
    world.clear();
    const { fp } = dbs.open({ tools: [put] });
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "q" });
    const cp = await s.checkpoint({ name: "cp0" });
    await s.invoke("put", { k: "a", v: "1" });
    const a = (await s.info()).currentBranchId;
    await s.rollback(cp.id);
    await s.append({ role: "user", content: "b" });
    const b = (await s.info()).currentBranchId;
    await s.switchBranch(a);
    await s.switchBranch(b); // the move the block's undo takes back
    await rejectionOf(
      s.atomic(async () => {
        await s.undo();
        await s.rollback(cp.id); // a new move: the block's undo is no longer to redo
        throw new Error("block failed");
      }),
    );
    expect((await s.info()).currentBranchId).not.toBe(a);
    await s.undo(); // the user's switch to b
    expect([(await s.info()).currentBranchId, world.get("a")]).toEqual([a, "1"]);
    await s.undo(); // and the switch to a before it
    expect(world.has("a")).toBe(false);
    expect((await fp.verify({ sessionId: s.id })).ok).toBe(true);
  });

  it("a block that succeeds after an undo and a move leaves a sound database", async () => {
    world.clear();
    const { fp } = dbs.open({ tools: [put] });
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "q" });
    const cp = await s.checkpoint({ name: "cp0" });
    await s.append({ role: "user", content: "a" });
    await s.rollback(cp.id);
    await s.atomic(async () => {
      await s.undo();
      await s.rollback(cp.id);
    });
    await expect(s.redo()).rejects.toMatchObject({ code: "NOTHING_TO_REDO" });
    await s.undo(); // the block's rollback
    expect((await s.history()).map((m) => m.content)).toEqual(["q", "a"]);
    expect((await fp.verify({ sessionId: s.id })).ok).toBe(true);
    await fp.prune();
    expect((await fp.verify({ sessionId: s.id })).ok).toBe(true);
  });
});
