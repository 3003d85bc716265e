// Undo, redo and rollback made inside a failed atomic block are no steps of the undo history after it: as if never run.
import { describe, expect, it } from "vitest";
import type { SessionHandle } from "../../src/index.js";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { worldPut } from "../fixtures/world-put.js";

const dbs = tempDatabases();
const { world, put } = worldPut();
const fail = () => Promise.reject(new Error("block failed"));

const seen = async (s: SessionHandle) => ({
  branch: (await s.info()).currentBranchId,
  history: (await s.history()).map((m) => m.content),
  world: Object.fromEntries(world),
});

/** q1, a checkpoint, put a (branch A), then a rollback to the checkpoint and q1b (branch B): one move to undo. */
async function twoBranches() {
  world.clear();
  const { fp, path } = dbs.open({ tools: [put] });
  const s = await fp.createSession({ userId: "u" });
  await s.append({ role: "user", content: "q1" });
  const cp = await s.checkpoint({ name: "cp0" });
  await s.invoke("put", { k: "a", v: "1" });
  const a = (await s.info()).currentBranchId;
  const b = (await s.rollback(cp.id)).branch.id;
  await s.append({ role: "user", content: "q1b" });
  return { s, path, cp, a, b };
}

describe("moves inside a failed atomic block", () => {
  it("a rollback inside it: undo after it takes back the user's move before the block", async () => {
    const { s, cp, a } = await twoBranches();
    await rejectionOf(
      s.atomic(async () => {
        await s.invoke("put", { k: "c" });
        await s.rollback(cp.id);
        await s.invoke("put", { k: "d" });
        return fail();
      }),
    );
    const after = await seen(s);
    expect(after.world).toEqual({});
    await s.undo();
    expect(await seen(s)).toEqual({ branch: a, history: ["q1"], world: { a: "1" } });
    await s.redo();
    expect(await seen(s)).toEqual(after);
    expect((await rejectionOf(s.redo())).code).toBe("NOTHING_TO_REDO");
  });

  it("an undo inside it: the move it took back is still the one to undo", async () => {
    const { s, a } = await twoBranches();
    await rejectionOf(
      s.atomic(async () => {
        await s.invoke("put", { k: "c" });
        await s.undo();
        return fail();
      }),
    );
    const after = await seen(s);
    expect(after).toMatchObject({ history: ["q1", "q1b"], world: {} });
    expect((await rejectionOf(s.redo())).code).toBe("NOTHING_TO_REDO");
    await s.undo();
    expect(await seen(s)).toEqual({ branch: a, history: ["q1"], world: { a: "1" } });
    await s.redo();
    expect(await seen(s)).toEqual(after);
  });

  it("a redo inside it: the undone move is still the one to redo, and nothing is to undo", async () => {
    const { s, b } = await twoBranches();
    await s.undo();
    await rejectionOf(
      s.atomic(async () => {
        await s.invoke("put", { k: "c" });
        await s.redo();
        return fail();
      }),
    );
    expect(await seen(s)).toMatchObject({ history: ["q1"], world: { a: "1" } });
    expect((await rejectionOf(s.undo())).code).toBe("NOTHING_TO_UNDO");
    await s.redo();
    expect(await seen(s)).toEqual({ branch: b, history: ["q1", "q1b"], world: {} });
  });

  it("an undo in a failed inner block, caught: the outer block's own history is as it was", async () => {
    const { s, a } = await twoBranches();
    await s.atomic(async () => {
      await rejectionOf(s.atomic(async () => s.undo().then(fail)));
    });
    await s.undo();
    expect(await seen(s)).toEqual({ branch: a, history: ["q1"], world: { a: "1" } });
  });

  it("another opener's move during the block stays in the history, under the block's own", async () => {
    const { s, path, cp, a, b } = await twoBranches();
    const t = await dbs.open({ tools: [put], path }).fp.getSession(s.id, { userId: "u" });
    await rejectionOf(
      s.atomic(async () => {
        // Another opener's rollback while the block runs: the user's move, not the block's.
        await t.rollback(cp.id);
        await s.invoke("put", { k: "c" });
        await s.switchBranch(b);
        return fail();
      }),
    );
    expect(await seen(s)).toEqual({ branch: b, history: ["q1", "q1b"], world: {} });
    // That rollback is taken back first (the session stays: the block's switch had left it where it came from), then
    // the user's own before the block; nothing of the block's.
    await s.undo();
    expect(await seen(s)).toEqual({ branch: b, history: ["q1", "q1b"], world: {} });
    await s.undo();
    expect(await seen(s)).toEqual({ branch: a, history: ["q1"], world: { a: "1" } });
    expect((await rejectionOf(s.undo())).code).toBe("NOTHING_TO_UNDO");
  });
});
