// A failed atomic block continues the branches its own writes and moves landed on or made, not another opener's.
import { describe, expect, it } from "vitest";
import type { SessionHandle } from "../../src/index.js";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { worldPut } from "../fixtures/world-put.js";

const dbs = tempDatabases();
const { world, put } = worldPut();

const contents = async (s: SessionHandle) => (await s.history()).map((m) => m.content);
const at = async (s: SessionHandle) => (await s.info()).currentBranchId;

async function fresh() {
  world.clear();
  const { fp, path } = dbs.open({ tools: [put] });
  const s = await fp.createSession({ userId: "u" });
  const [q] = await s.append({ role: "user", content: "q" });
  const [a] = await s.append({ role: "assistant", content: "a" });
  return { fp, path, s, q: q!, a: a!, start: await at(s) };
}

describe("a failed atomic block's own branches", () => {
  it("a branch another opener made during the block is entered as it is", async () => {
    const { path, s, q } = await fresh();
    const t = await dbs.open({ tools: [put], path }).fp.getSession(s.id, { userId: "u" });
    let late = "";
    await rejectionOf(
      s.atomic(async () => {
        await s.append({ role: "assistant", content: "half" });
        // Another opener's answer after an older message: a branch of its own, no part of the block.
        late = (await t.append({ role: "user", content: "late" }, { after: q.id }))[0]!.branchId;
        throw new Error("block failed");
      }),
    );
    const r = await at(s);
    expect(late).not.toBe(r);
    expect((await s.plan({ branchId: late })).branch.id).toBe(late);
    expect((await s.switchBranch(late)).branch.id).toBe(late);
    expect(await contents(s)).toEqual(["q", "late"]);
  });

  it("a branch another opener wrote on during the block is entered as it is", async () => {
    const { path, s, q, a, start } = await fresh();
    const t = await dbs.open({ tools: [put], path }).fp.getSession(s.id, { userId: "u" });
    await s.edit(q.id, { content: "q2" });
    await rejectionOf(
      s.atomic(async () => {
        await s.append({ role: "assistant", content: "half" });
        await t.append({ role: "user", content: "late" }, { after: a.id });
        throw new Error("block failed");
      }),
    );
    expect((await s.switchBranch(start)).branch.id).toBe(start);
    expect(await contents(s)).toEqual(["q", "a", "late"]);
  });

  it("a branch an inner failed block's rollback made is continued by the outer block's rollback", async () => {
    const { s } = await fresh();
    let inner = "";
    await rejectionOf(
      s.atomic(async () => {
        await s.invoke("put", { k: "outer", v: "1" });
        await s.append({ role: "assistant", content: "outer-half" });
        await rejectionOf(
          s.atomic(async () => {
            await s.append({ role: "assistant", content: "inner-half" });
            throw new Error("inner failed");
          }),
        );
        inner = await at(s);
        throw new Error("outer failed");
      }),
    );
    const r = await at(s);
    const moved = await s.switchBranch(inner);
    expect(moved.branch.id).toBe(r);
    expect(moved.replayed).toEqual([]);
    expect(await contents(s)).toEqual(["q", "a"]);
    expect(world.has("outer")).toBe(false);
  });

  it("a branch a rollback inside the block made is continued by the block's rollback", async () => {
    const { s } = await fresh();
    let made = "";
    await rejectionOf(
      s.atomic(async () => {
        await s.append({ role: "assistant", content: "before" });
        const cp = await s.checkpoint({ name: "in" });
        await s.invoke("put", { k: "c", v: "1" });
        await s.append({ role: "assistant", content: "half" });
        made = (await s.rollback(cp.id)).branch.id;
        throw new Error("block failed");
      }),
    );
    const r = await at(s);
    expect(made).not.toBe(r);
    const moved = await s.switchBranch(made);
    expect(moved.branch.id).toBe(r);
    expect(moved.replayed).toEqual([]);
    expect(await contents(s)).toEqual(["q", "a"]);
    expect(world.has("c")).toBe(false);
  });

  it("a block that rolled back to its own start itself: undo and a switch bring none of it back", async () => {
    const { s, start } = await fresh();
    const cp = await s.checkpoint({ name: "pre" });
    await rejectionOf(
      s.atomic(async () => {
        await s.invoke("put", { k: "c", v: "1" });
        await s.append({ role: "assistant", content: "half" });
        await s.rollback(cp.id);
        throw new Error("block failed");
      }),
    );
    const here = await at(s);
    expect(await contents(s)).toEqual(["q", "a"]);
    const undone = await s.undo().catch((error: { code?: string }) => error.code ?? "refused");
    if (typeof undone !== "string") {
      expect(undone.replayed).toEqual([]);
      expect(undone.branch.id).toBe(here);
    } else expect(undone).toBe("NOTHING_TO_UNDO");
    expect(await contents(s)).toEqual(["q", "a"]);
    expect(world.has("c")).toBe(false);
    const moved = await s.switchBranch(start);
    expect(moved.replayed).toEqual([]);
    expect(await contents(s)).toEqual(["q", "a"]);
    expect(world.has("c")).toBe(false);
  });
});
