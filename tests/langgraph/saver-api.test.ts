// ForkpointSaver's own API beside LangGraph's: sessionFor and configFor map between threads and sessions without
// scanning, one saver serves many users (the user read from each run's config), and LangGraph's per-step
// checkpoints are automatic, so a user's own checkpoint listing leaves them out.
import { describe, expect, it } from "vitest";
import { NotFoundError, ValidationError } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { echoGraph, texts, say } from "./helpers.js";

const dbs = tempDatabases();

const as = (userId: string, threadId: string, key = "userId") => ({ configurable: { thread_id: threadId, [key]: userId } });

describe("ForkpointSaver's API", () => {
  it("sessionFor gives a thread's session, scoped to its user", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp);
    await echoGraph(saver).invoke(say("hi"), as("alice", "t1"));
    const s = await saver.sessionFor("t1", { userId: "alice" });
    expect(s.userId).toBe("alice");
    expect((await s.history()).map((m) => m.content)).toEqual(["hi", "echo: hi"]);
    await expect(saver.sessionFor("t1", { userId: "bob" })).rejects.toBeInstanceOf(NotFoundError);
    await expect(saver.sessionFor("t1")).rejects.toMatchObject({ code: "NOT_FOUND", kind: "thread" });
    await expect(saver.sessionFor("", { userId: "alice" })).rejects.toBeInstanceOf(ValidationError);
  });

  it("configFor a LangGraph checkpoint is its own config; for a user's own checkpoint, a config LangGraph resumes from", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = echoGraph(saver);
    await graph.invoke(say("hi"), as("alice", "t"));
    const s = await saver.sessionFor("t", { userId: "alice" });
    // A user's own checkpoint after a message appended through forkpoint: no LangGraph checkpoint sits there.
    await s.append({ role: "user", content: "and you?" });
    const mine = await s.checkpoint({ name: "asked" });
    await graph.invoke(say("plan a trip"), as("alice", "t"));

    // The LangGraph checkpoint (by its forkpoint checkpoint, or by its own id) gives its own config.
    const latest = await saver.getTuple(as("alice", "t"));
    const lgId = latest!.config.configurable!.checkpoint_id as string;
    const { items } = await fp.listCheckpoints({ userId: "alice", sessionId: s.id, auto: true, limit: 1 });
    expect((await saver.configFor({ checkpointId: items[0]!.id })).configurable).toEqual({
      thread_id: "t",
      checkpoint_ns: "",
      checkpoint_id: lgId,
    });
    expect((await saver.configFor({ checkpointId: lgId })).configurable).toEqual({
      thread_id: "t",
      checkpoint_ns: "",
      checkpoint_id: lgId,
    });

    // The user's own: invoked with it, the graph forks there (LangGraph's time travel), from the state at that position.
    const config = await saver.configFor({ checkpointId: mine.id }, { userId: "alice" });
    const there = await graph.getState(config);
    expect(texts(there.values.messages)).toEqual(["human:hi", "ai:echo: hi", "human:and you?"]);
    // Settled: the next input ("plan a trip", taken after the checkpoint) is not pending there.
    expect(there.next).toEqual([]);
    const forked = await graph.invoke(say("plan a party"), config);
    expect(texts(forked.messages)).toEqual(["human:hi", "ai:echo: hi", "human:and you?", "human:plan a party", "ai:echo: plan a party"]);
    expect((await s.history()).map((m) => m.content)).toEqual(["hi", "echo: hi", "and you?", "plan a party", "echo: plan a party"]);
    const branches = await s.branches();
    expect(branches).toHaveLength(2);

    // A branch's head: the first branch's, which the graph goes on from when invoked with it.
    const first = branches.find((b) => !b.current)!;
    const head = await saver.configFor({ branchId: first.id });
    expect(texts((await graph.getState(head)).values.messages).at(-1)).toBe("ai:echo: plan a trip");

    // The fork at a position no checkpoint marks exports and imports whole.
    const elsewhere = dbs.open().fp;
    const copy = await elsewhere.importSession(await fp.exportSession(s.id, { userId: "alice" }), { userId: "carol" });
    expect((await copy.history()).map((m) => m.content)).toEqual(["hi", "echo: hi", "and you?", "plan a party", "echo: plan a party"]);

    // Other users' ids, and unknown ones, are not found.
    await expect(saver.configFor({ checkpointId: mine.id }, { userId: "bob" })).rejects.toBeInstanceOf(NotFoundError);
    await expect(saver.configFor({ branchId: first.id }, { userId: "bob" })).rejects.toBeInstanceOf(NotFoundError);
    await expect(saver.configFor({ checkpointId: "nope" })).rejects.toBeInstanceOf(NotFoundError);
    await expect(saver.configFor(null as never)).rejects.toBeInstanceOf(ValidationError);
  });

  it("one saver serves many users: each run's configurable.userId (or user_id) names its own threads", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const graph = echoGraph(saver);
    await graph.invoke(say("alice's secret"), as("alice", "t1"));
    await graph.invoke(say("bob's"), as("bob", "t1", "user_id"));
    await graph.invoke(say("more"), as("alice", "t1", "user_id"));
    expect(texts((await graph.getState(as("alice", "t1"))).values.messages)).toEqual([
      "human:alice's secret",
      "ai:echo: alice's secret",
      "human:more",
      "ai:echo: more",
    ]);
    expect(texts((await graph.getState(as("bob", "t1"))).values.messages)).toEqual(["human:bob's", "ai:echo: bob's"]);
    // Neither is the saver's default user's thread.
    expect((await graph.getState({ configurable: { thread_id: "t1" } })).values).toEqual({});
    expect((await fp.listSessions({ userId: "alice" })).items).toHaveLength(1);
    expect((await fp.listSessions({ userId: "bob" })).items).toHaveLength(1);
    const listed = [];
    for await (const t of saver.list(as("bob", "t1"))) listed.push(t.config.configurable);
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.every((c) => c?.userId === "bob")).toBe(true);

    await expect(graph.invoke(say("x"), { configurable: { thread_id: "t1", userId: "alice", user_id: "bob" } })).rejects.toBeInstanceOf(
      ValidationError,
    );
    await expect(saver.getTuple({ configurable: { thread_id: "t1", userId: "\ud800" } })).rejects.toMatchObject({ code: "MALFORMED_TEXT" });
    await saver.deleteThread("t1", { userId: "bob" });
    expect((await fp.listSessions({ userId: "bob" })).items).toHaveLength(0);
    expect((await fp.listSessions({ userId: "alice" })).items).toHaveLength(1);
  });

  it("LangGraph's checkpoints are automatic: a user's own listing (auto: false) shows only theirs", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    await echoGraph(saver).invoke(say("hi"), as("alice", "t"));
    const s = await saver.sessionFor("t", { userId: "alice" });
    const mine = await s.checkpoint({ name: "mine" });
    const own = await fp.listCheckpoints({ userId: "alice", auto: false });
    expect(own.items.map((c) => c.id)).toEqual([mine.id]);
    const all = await fp.listCheckpoints({ userId: "alice", limit: 100 });
    expect(all.items.length).toBeGreaterThan(3);
    expect(all.items.filter((c) => c.id !== mine.id).every((c) => c.auto)).toBe(true);
  });

  it("list takes any limit past the checkpoints there are as no limit, alike on every store", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const thread = { configurable: { thread_id: "t" } };
    await echoGraph(saver).invoke(say("hi"), thread);
    const count = async (limit: number) => {
      let n = 0;
      for await (const _ of saver.list(thread, { limit })) n++;
      return n;
    };
    const all = await count(1_000);
    expect(all).toBeGreaterThan(1);
    for (const limit of [2 ** 53, 2 ** 63, 1e300]) expect(await count(limit)).toBe(all);
    expect(await count(1.5)).toBe(1);
  });
});
