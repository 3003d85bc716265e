// Tracked objects: fields of a plain object saved into the state, loaded back by moves and restores.
import { describe, expect, it } from "vitest";
import { ValidationError } from "../../src/index.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

describe("track", () => {
  it("saves the fields as top-level state keys, keeping the others", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.setState({ other: 1, memory: "stale" });
    const agent = { memory: ["a"], callCount: 1, scratch: "not tracked" };
    const t = s.track(agent, { fields: ["memory", "callCount"] });
    expect(await t.save()).toEqual({ other: 1, memory: ["a"], callCount: 1 });
    // What is saved is what the object held when save() was called.
    agent.callCount = 2;
    const saving = t.save();
    agent.callCount = 99;
    expect(await saving).toMatchObject({ callCount: 2 });
  });

  it("rollbacks, edits, switches, undo, redo and restores load the fields back into the object", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const agent = { memory: [] as string[], callCount: 0 };
    const t = s.track(agent, { fields: ["memory", "callCount"] });
    const [m1] = await s.append({ role: "user", content: "hi" });
    agent.memory.push("one");
    agent.callCount = 1;
    await t.save();
    const cp1 = await s.checkpoint();
    agent.memory.push("two");
    agent.callCount = 2;
    await t.save();
    const cp2 = await s.checkpoint();
    const root = (await s.info()).currentBranchId;

    await s.rollback(cp1.id);
    expect(agent).toEqual({ memory: ["one"], callCount: 1 });
    await s.switchBranch(root);
    expect(agent).toEqual({ memory: ["one", "two"], callCount: 2 });
    // An edit forks before the first message, where nothing was saved: the fields take their values at track time.
    await s.edit(m1!.id, { role: "user", content: "hello" });
    expect(agent).toEqual({ memory: [], callCount: 0 });
    // restore reads a checkpoint (the database is unchanged) and loads its fields into the object.
    await s.restore(cp2.id);
    expect(agent).toEqual({ memory: ["one", "two"], callCount: 2 });
    expect(await s.getState()).toEqual({});
    // A move through another handle of the same session loads them too.
    const other = await fp.getSession(s.id, { userId: "u" });
    await other.rollback(cp1.id);
    await t.load();
    expect(agent).toEqual({ memory: ["one"], callCount: 1 });
    // Undo and redo are moves too: back to the edit's branch, and forward again.
    await s.undo();
    expect(agent).toEqual({ memory: [], callCount: 0 });
    await s.redo();
    expect(agent).toEqual({ memory: ["one"], callCount: 1 });

    t.stop();
    await s.rollback(cp2.id);
    expect(agent).toEqual({ memory: ["one"], callCount: 1 });
  });

  it("keeps the fields under a key when given one; atomic's rollback loads them", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const agent = { n: 1 };
    const t = s.track(agent, { fields: ["n"], key: "agent" });
    await s.setState({ kept: true });
    expect(await t.save()).toEqual({ kept: true, agent: { n: 1 } });
    await rejectionOf(
      s.atomic(async () => {
        agent.n = 5;
        await t.save();
        throw new Error("undo it");
      }),
    );
    expect(agent.n).toBe(1);
    expect(await s.getState()).toEqual({ kept: true, agent: { n: 1 } });
  });

  it("validates its input; a field that is not JSON writes nothing", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    expect(() => s.track(null as never, { fields: ["a"] })).toThrow(ValidationError);
    expect(() => s.track({}, { fields: [] })).toThrow(ValidationError);
    expect(() => s.track({}, { fields: ["a"], bogus: 1 } as never)).toThrow(ValidationError);
    expect(() => s.track({ f: () => 1 }, { fields: ["f"] })).toThrow(ValidationError);
    const agent: { f: unknown } = { f: 1 };
    const t = s.track(agent, { fields: ["f"] });
    agent.f = () => 1;
    expect(await rejectionOf(t.save())).toBeInstanceOf(ValidationError);
    expect(await s.getState()).toEqual({});
  });
});
