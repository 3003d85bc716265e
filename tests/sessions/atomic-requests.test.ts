// A failed atomic block's own request ids are not applied: a retry of the block with the same ids runs it again.
import { describe, expect, it } from "vitest";
import { defineTool, type SessionHandle } from "../../src/index.js";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { worldPut } from "../fixtures/world-put.js";

const dbs = tempDatabases();
const { world, runs, put } = worldPut();
const sent: string[] = [];
// A tool without an undo: a rollback leaves its calls applied.
const email = defineTool<{ to: string }, { ok: boolean }>({
  name: "email",
  run: async ({ to }) => {
    sent.push(to);
    return { ok: true };
  },
});

async function fresh() {
  world.clear();
  runs.length = 0;
  sent.length = 0;
  const { fp, path } = dbs.open({ tools: [put, email] });
  const s = await fp.createSession({ userId: "u" });
  await s.append({ role: "user", content: "book a trip" });
  return { s, path, fp };
}

const contents = async (s: SessionHandle) => (await s.history()).map((m) => m.content);

describe("a failed atomic block's request ids", () => {
  it("a retry with the same ids runs the block again: messages, calls, state and turns", async () => {
    const { s } = await fresh();
    let attempt = 0;
    const step = async () => {
      attempt++;
      const [m] = await s.append({ role: "assistant", content: "booking" }, { requestId: "msg-1" });
      await s.invoke("put", { k: "booking", v: "B1" }, { requestId: "call-1" });
      await s.setState({ booked: true }, { requestId: "state-1" });
      const t = await s.turn({ role: "assistant", content: "booked" }, { name: "t" }, { requestId: "turn-1" });
      if (attempt === 1) throw new Error("transient");
      return { m: m!, t };
    };
    await rejectionOf(s.atomic(step));
    expect([await contents(s), [...world], await s.getState()]).toEqual([["book a trip"], [], {}]);
    const { m, t } = await s.atomic(step);
    const here = (await s.info()).currentBranchId;
    expect([m.branchId, t.checkpoint.branchId]).toEqual([here, here]);
    expect(await contents(s)).toEqual(["book a trip", "booking", "booked"]);
    expect([[...world], runs, await s.getState()]).toEqual([[["booking", "B1"]], ["booking", "booking"], { booked: true }]);
    // Applied now: a further retry answers as the retried block's calls did, writing nothing.
    expect((await s.append({ role: "assistant", content: "booking" }, { requestId: "msg-1" }))[0]!.id).toBe(m.id);
    expect(await contents(s)).toEqual(["book a trip", "booking", "booked"]);
  });

  it("an id applied before the block stays applied when the block's retry of it fails", async () => {
    const { s } = await fresh();
    const [first] = await s.append({ role: "assistant", content: "a" }, { requestId: "before" });
    await rejectionOf(
      s.atomic(async () => {
        await s.append({ role: "assistant", content: "a" }, { requestId: "before" });
        throw new Error("boom");
      }),
    );
    const [again] = await s.append({ role: "assistant", content: "a" }, { requestId: "before" });
    expect(again!.id).toBe(first!.id);
    expect(await contents(s)).toEqual(["book a trip", "a"]);
  });

  it("another opener's request made during the block stays applied", async () => {
    const { s, path } = await fresh();
    const t = await dbs.open({ tools: [put], path }).fp.getSession(s.id, { userId: "u" });
    await rejectionOf(
      s.atomic(async () => {
        await t.setState({ other: 1 }, { requestId: "other-state" });
        throw new Error("boom");
      }),
    );
    const before = await t.getState();
    expect(await t.setState({ other: 1 }, { requestId: "other-state" })).toEqual({ other: 1 });
    expect(await t.getState()).toEqual(before);
  });
  it("ids of writes the rollback leaves stay applied: a call without an undo, a deleted checkpoint, a title", async () => {
    const { s } = await fresh();
    const old = await s.checkpoint({ name: "old" });
    let attempt = 0;
    const step = async () => {
      attempt++;
      await s.invoke("email", { to: "bob" }, { requestId: "email-1" });
      await s.deleteCheckpoint(old.id, { requestId: "del-1" });
      await s.update({ title: "Trip" }, { requestId: "upd-1" });
      await s.append({ role: "assistant", content: "done" }, { requestId: "msg-1" });
      if (attempt === 1) throw new Error("transient");
    };
    await rejectionOf(s.atomic(step));
    await s.atomic(step);
    expect(sent).toEqual(["bob"]);
    expect([await contents(s), (await s.info()).title]).toEqual([["book a trip", "done"], "Trip"]);
  });

  it("forgets only its own session's ids: a write on another session in the block keeps the same id there", async () => {
    const { s, fp } = await fresh();
    await s.turn({ role: "assistant", content: "s1 turn" }, { name: "t" }, { requestId: "turn-1" });
    const s2 = await fp.createSession({ userId: "u" });
    await rejectionOf(
      s.atomic(async () => {
        await s2.turn({ role: "assistant", content: "s2 turn" }, { name: "t" }, { requestId: "turn-1" });
        throw new Error("boom");
      }),
    );
    await s.turn({ role: "assistant", content: "s1 turn" }, { name: "t" }, { requestId: "turn-1" });
    await s2.turn({ role: "assistant", content: "s2 turn" }, { name: "t" }, { requestId: "turn-1" });
    expect([await contents(s), await contents(s2)]).toEqual([["book a trip", "s1 turn"], ["s2 turn"]]);
  });

  it("an inner block's forgotten ids are not the outer block's: another opener's record of them stays", async () => {
    const { s, path } = await fresh();
    const [b1] = await s.append({ role: "assistant", content: "b1" });
    const B = (await s.info()).currentBranchId;
    await s.edit(b1!.id, { content: "a1" });
    const t = await dbs.open({ tools: [put], path }).fp.getSession(s.id, { userId: "u" });
    const follow = () => t.append({ role: "user", content: "follow" }, { requestId: "follow-1", after: b1!.id });
    let first = "";
    await rejectionOf(
      s.atomic(async () => {
        await rejectionOf(
          s.atomic(async () => {
            await s.append({ role: "user", content: "follow" }, { requestId: "follow-1" });
            throw new Error("inner");
          }),
        );
        first = (await follow())[0]!.id;
        throw new Error("outer");
      }),
    );
    // Applied still: the retry answers with the first message, writing nothing.
    expect((await follow())[0]!.id).toBe(first);
    expect((await t.history({ branchId: B })).map((m) => m.content)).toEqual(["book a trip", "b1", "follow"]);
  });
});
