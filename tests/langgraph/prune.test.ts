// ForkpointSaver.prune(threadIds, { strategy }), as LangGraph's Python savers have it: "delete" deletes the threads,
// "keep_latest" keeps each namespace's latest checkpoint and what the thread, its branches, a pending interrupt and its
// DeltaChannels still read; the session's messages and tree stay whole, and the next run goes on from what was kept.
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import {
  Command,
  DeltaValue,
  END,
  MessagesDeltaValue,
  MessagesValue,
  START,
  StateGraph,
  StateSchema,
  interrupt,
} from "@langchain/langgraph";
import { emptyCheckpoint, uuid6, type Checkpoint } from "@langchain/langgraph-checkpoint";
import type { RunnableConfig } from "@langchain/core/runnables";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConflictError, ForkpointError, ValidationError, defineTool, type Forkpoint } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { dumpOf, sqlOn } from "../fixtures/backend.js";
import { approvalGraph, echoGraph, say, texts } from "./helpers.js";

const dbs = tempDatabases();

const thread = (id: string, checkpointId?: string, ns?: string) => ({
  configurable: {
    thread_id: id,
    ...(ns !== undefined ? { checkpoint_ns: ns } : {}),
    ...(checkpointId ? { checkpoint_id: checkpointId } : {}),
  },
});

/** The ids `list` gives for a config, newest first. */
async function listed(saver: ForkpointSaver, config: RunnableConfig): Promise<string[]> {
  const out: string[] = [];
  for await (const t of saver.list(config)) out.push(t.config.configurable!.checkpoint_id as string);
  return out;
}

/** `n` checkpoints put one after another on a thread (namespace `ns`), as LangGraph's conformance suites put them. */
async function chain(saver: ForkpointSaver, threadId: string, n: number, ns = ""): Promise<RunnableConfig[]> {
  const configs: RunnableConfig[] = [];
  let parent: RunnableConfig = { configurable: { thread_id: threadId, checkpoint_ns: ns } };
  for (let i = 0; i < n; i++) {
    const checkpoint: Checkpoint = { ...emptyCheckpoint(), id: uuid6(i) };
    parent = await saver.put(parent, checkpoint, { source: "loop", step: i, parents: {} }, {});
    configs.push(parent);
  }
  return configs;
}

const idOf = (config: RunnableConfig) => config.configurable!.checkpoint_id as string;

/** How many rows each of the saver's tables and the forkpoint checkpoints hold. */
async function rows(path: string) {
  const n = async (table: string) => Number((await sqlOn<{ n: number | string }>(path, `SELECT count(*) AS n FROM ${table}`))[0]!.n);
  return { lg: await n("lg_checkpoints"), writes: await n("lg_writes"), blobs: await n("lg_blobs"), fp: await n("checkpoints") };
}

async function verified(fp: Forkpoint) {
  expect(await fp.verify()).toMatchObject({ ok: true, problems: [] });
}

describe("ForkpointSaver.prune, as LangGraph's savers prune", () => {
  it("keep_latest keeps a thread's latest checkpoint alone, with its pending writes", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const configs = await chain(saver, "t", 4);
    await saver.putWrites(configs.at(-1)!, [["ch", "val"]], "task-1");
    await saver.prune(["t"], { strategy: "keep_latest" });
    expect(await listed(saver, thread("t"))).toEqual([idOf(configs.at(-1)!)]);
    const tuple = await saver.getTuple(thread("t"));
    expect(tuple?.pendingWrites).toEqual([["task-1", "ch", "val"]]);
    await verified(fp);
  });

  it("keep_latest is the default, keeps each thread's latest, and leaves threads it is not given as they were", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const a = await chain(saver, "a", 3);
    const b = await chain(saver, "b", 2);
    const c = await chain(saver, "c", 3);
    const before = await listed(saver, thread("c"));
    await saver.prune(["a", "b"]);
    expect(await listed(saver, thread("a"))).toEqual([idOf(a.at(-1)!)]);
    expect(await listed(saver, thread("b"))).toEqual([idOf(b.at(-1)!)]);
    expect(await listed(saver, thread("c"))).toEqual(before);
    expect(before).toHaveLength(c.length);
  });

  it("keep_latest keeps the latest of each namespace of a thread", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const root = await chain(saver, "t", 3, "");
    const child = await chain(saver, "t", 2, "child:1");
    await saver.prune(["t"], { strategy: "keep_latest" });
    expect(await listed(saver, thread("t", undefined, ""))).toEqual([idOf(root.at(-1)!)]);
    expect(await listed(saver, thread("t", undefined, "child:1"))).toEqual([idOf(child.at(-1)!)]);
    await verified(fp);
  });

  it("delete removes every namespace of the threads, their sessions too, as deleteThread does", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp);
    await chain(saver, "t", 3);
    await chain(saver, "t", 2, "child:1");
    await chain(saver, "u", 2);
    await saver.prune(["t"], { strategy: "delete" });
    expect(await listed(saver, thread("t", undefined, ""))).toEqual([]);
    expect(await listed(saver, thread("t", undefined, "child:1"))).toEqual([]);
    expect(await listed(saver, thread("u"))).toHaveLength(2);
    expect((await fp.listSessions({ userId: "langgraph" })).items.map((s) => s.title)).toEqual(["u"]);
    await verified(fp);
  });

  it("an empty list, or threads the user does not have, change nothing", async () => {
    const { fp, path } = dbs.open();
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    await chain(saver, "t", 3);
    const before = await dumpOf(path);
    await saver.prune([], { strategy: "keep_latest" });
    await saver.prune(["nope"], { strategy: "keep_latest" });
    await saver.prune(["t"], { strategy: "delete", userId: "bob" });
    await saver.prune(["t"], { userId: "bob" });
    expect(await dumpOf(path)).toEqual(before);
    expect(await listed(saver, thread("t"))).toHaveLength(3);
  });

  it("prunes the threads of the user it is told (default: the saver's), never another user's thread of that id", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const alice = await chain(saver, "t", 3);
    const bobConfig = { configurable: { thread_id: "t", checkpoint_ns: "", userId: "bob" } };
    let parent: RunnableConfig = bobConfig;
    for (let i = 0; i < 3; i++) {
      const next = await saver.put(parent, { ...emptyCheckpoint(), id: uuid6(i) }, { source: "loop", step: i, parents: {} }, {});
      parent = { configurable: { ...next.configurable, userId: "bob" } };
    }
    await saver.prune(["t"]);
    expect(await listed(saver, thread("t"))).toEqual([idOf(alice.at(-1)!)]);
    expect(await listed(saver, bobConfig)).toHaveLength(3);
    await saver.prune(["t"], { userId: "bob" });
    expect(await listed(saver, bobConfig)).toEqual([idOf(parent)]);
  });

  it("refuses bad arguments with a typed error naming them, and changes nothing", async () => {
    const { fp, path } = dbs.open();
    const saver = new ForkpointSaver(fp);
    await chain(saver, "t", 3);
    const before = await dumpOf(path);
    const bad: [() => Promise<void>, string, string][] = [
      [() => saver.prune("t" as unknown as string[]), "threadIds", "VALIDATION_ERROR"],
      [() => saver.prune(["t", {} as unknown as string]), "threadIds[1]", "VALIDATION_ERROR"],
      [() => saver.prune(["t", "bad\uD800"]), "threadIds[1]", "MALFORMED_TEXT"],
      // Ids no put stores (sessionFor refuses them too): refused, not skipped as unknown while "t" is pruned.
      [() => saver.prune(["t", ""]), "threadIds[1]", "VALIDATION_ERROR"],
      [() => saver.prune(["t", "x".repeat(600)]), "threadIds[1]", "VALIDATION_ERROR"],
      [() => saver.prune(["t"], { strategy: "keep_all" as "delete" }), "options.strategy", "VALIDATION_ERROR"],
      [() => saver.prune(["t"], { strategy: 1 as unknown as "delete" }), "options.strategy", "VALIDATION_ERROR"],
      [() => saver.prune(["t"], { strategy: "delete", force: true } as object), "options.force", "VALIDATION_ERROR"],
      [() => saver.prune(["t"], null as unknown as object), "options", "VALIDATION_ERROR"],
      [() => saver.prune(["t"], "delete" as unknown as object), "options", "VALIDATION_ERROR"],
      [() => saver.prune(["t"], { strategy: "delete", userId: "" }), "userId", "VALIDATION_ERROR"],
    ];
    for (const [call, field, code] of bad) {
      const error = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, field).toBeInstanceOf(ValidationError);
      expect(error).toBeInstanceOf(ForkpointError);
      expect(error).toMatchObject({ field, code });
    }
    expect(await dumpOf(path)).toEqual(before);
    expect(await listed(saver, thread("t"))).toHaveLength(3);
  });
});

describe("keep_latest on a graph's threads", () => {
  it("refuses a thread whose session is in the middle of a move (MOVE_IN_PROGRESS), and prunes it once the move is done", async () => {
    let undoStarted!: () => void;
    const started = new Promise<void>((resolve) => (undoStarted = resolve));
    let finishUndo!: () => void;
    const gate = new Promise<void>((resolve) => (finishUndo = resolve));
    const slow = defineTool({
      name: "slow",
      run: async () => "done",
      undo: async () => {
        undoStarted();
        await gate;
      },
    });
    const { fp, path } = dbs.open({ tools: [slow] });
    const saver = new ForkpointSaver(fp);
    const graph = echoGraph(saver);
    await graph.invoke(say("one"), thread("t"));
    const s = await saver.sessionFor("t");
    const before = await s.checkpoint({ name: "before the call" });
    await s.recordToolCall({ tool: "slow", args: {}, result: "done" });
    await graph.invoke(say("two"), thread("t"));
    const moving = s.rollback(before.id);
    await started;
    const counts = await rows(path);
    await expect(saver.prune(["t"])).rejects.toSatisfy((e) => e instanceof ConflictError && e.code === "MOVE_IN_PROGRESS");
    expect(await rows(path)).toEqual(counts);
    finishUndo();
    await moving;
    await saver.prune(["t"]);
    expect((await rows(path)).lg).toBeLessThan(counts.lg);
    expect(texts((await graph.invoke(say("three"), thread("t"))).messages)).toEqual([
      "human:one",
      "ai:echo: one",
      "human:three",
      "ai:echo: three",
    ]);
    await verified(fp);
  });

  it("keeps the latest checkpoint and the whole conversation; the next run goes on from it; pruning again changes nothing", async () => {
    const { fp, path } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const graph = echoGraph(saver);
    for (const text of ["one", "two", "three"]) await graph.invoke(say(text), thread("t"));
    const state = await graph.getState(thread("t"));
    const before = await rows(path);
    await saver.prune(["t"]);

    expect(await listed(saver, thread("t"))).toEqual([idOf(state.config)]);
    // The thread's empty start and the kept checkpoint's forkpoint checkpoint stay; the rest go, with their rows.
    expect(await rows(path)).toEqual({ lg: 1, writes: 0, blobs: 0, fp: 2 });
    expect(before.lg).toBe(9);
    expect((await graph.getState(thread("t"))).values).toEqual(state.values);
    const s = await saver.sessionFor("t");
    expect((await s.history()).map((m) => m.content)).toEqual(["one", "echo: one", "two", "echo: two", "three", "echo: three"]);
    await verified(fp);

    const out = await graph.invoke(say("four"), thread("t"));
    expect(texts(out.messages).slice(-3)).toEqual(["ai:echo: three", "human:four", "ai:echo: four"]);
    expect((await s.history()).map((m) => m.content)).toHaveLength(8);
    expect(await s.branches()).toHaveLength(1);

    await saver.prune(["t"]);
    const once = await dumpOf(path);
    await saver.prune(["t"]);
    expect(await dumpOf(path)).toEqual(once);
    await verified(fp);
  });

  it("a graph waiting at an interrupt still waits there, and resumes with the answer", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const graph = approvalGraph(saver);
    await graph.invoke(say("go"), thread("i"));
    await graph.invoke(new Command({ resume: "yes" }), thread("i"));
    await graph.invoke(say("again"), thread("i"));
    const waiting = await graph.getState(thread("i"));
    expect(waiting.next).toEqual(["ask"]);
    await saver.prune(["i"]);

    expect(await listed(saver, thread("i"))).toEqual([idOf(waiting.config)]);
    const state = await graph.getState(thread("i"));
    expect(state.next).toEqual(["ask"]);
    expect(state.tasks[0]?.interrupts[0]?.value).toBe("approve?");
    await verified(fp);
    const out = await graph.invoke(new Command({ resume: "fine" }), thread("i"));
    expect(texts(out.messages)).toEqual(["human:go", "ai:approved: yes", "human:again", "ai:approved: fine"]);
  });

  it("a rollback to where the graph waited at an interrupt, pruned: it still waits there, its answer undone", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const graph = approvalGraph(saver);
    await graph.invoke(say("go"), thread("i"));
    const s = await saver.sessionFor("i");
    const waiting = await s.checkpoint({ name: "waiting for approval" });
    const atInterrupt = idOf((await graph.getState(thread("i"))).config);
    await graph.invoke(new Command({ resume: "yes" }), thread("i"));
    // The first branch goes on, and waits again: the step that answered the first question is no branch's end.
    await graph.invoke(say("more"), thread("i"));
    await s.rollback(waiting.id);
    await saver.prune(["i"]);
    // What the answered continuation wrote at the interrupt went with it: the interrupt itself stays.
    const kept = await saver.getTuple(thread("i", atInterrupt));
    expect(kept?.pendingWrites?.map(([, channel]) => channel)).toEqual(["__interrupt__"]);

    const state = await graph.getState(thread("i"));
    expect(texts(state.values.messages)).toEqual(["human:go"]);
    expect(state.next).toEqual(["ask"]);
    expect(state.tasks[0]?.interrupts[0]?.value).toBe("approve?");
    await verified(fp);
    const out = await graph.invoke(new Command({ resume: "no" }), thread("i"));
    expect(texts(out.messages)).toEqual(["human:go", "ai:approved: no"]);
    // The branch the rollback left keeps its end: switched back to, it is where it was.
    const [first] = await s.branches();
    await s.switchBranch(first!.id);
    expect(texts((await graph.getState(thread("i"))).values.messages)).toEqual(["human:go", "ai:approved: yes", "human:more"]);
    const again = await graph.invoke(new Command({ resume: "sure" }), thread("i"));
    expect(texts(again.messages)).toEqual(["human:go", "ai:approved: yes", "human:more", "ai:approved: sure"]);
  });

  it("a thread with several branches: each branch, its fork points and a user's checkpoint still resume as before", async () => {
    const { fp, path } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const graph = echoGraph(saver);
    await graph.invoke(say("hi"), thread("t"));
    await graph.invoke(say("plan a trip"), thread("t"));
    const tripEnd = idOf((await graph.getState(thread("t"))).config);
    const s = await saver.sessionFor("t");
    const saved = await s.checkpoint({ name: "trip planned" });
    await graph.invoke(say("book it"), thread("t"));
    // Time travel to the end of the first turn: a second branch.
    const past = [];
    for await (const snap of graph.getStateHistory(thread("t"))) past.push(snap);
    const afterFirst = past.find((p) => p.values.messages?.length === 2 && p.next.length === 0)!;
    await graph.invoke(say("plan a party"), afterFirst.config);
    // An edit of the party question through forkpoint: a third branch, whose head no LangGraph checkpoint marks.
    const party = (await s.history()).find((m) => m.content === "plan a party")!;
    await s.edit(party.id, { role: "user", content: "plan a picnic" });

    const branches = await s.branches();
    expect(branches).toHaveLength(3);
    const statesBefore = new Map<string, unknown>();
    for (const b of branches) {
      await s.switchBranch(b.id);
      statesBefore.set(b.id, (await graph.getState(thread("t"))).values);
    }
    const lgBefore = (await rows(path)).lg;
    await saver.prune(["t"]);
    await verified(fp);

    // Kept: the first two branches' ends, the first turn's end (the second branch forks there, and the edited
    // branch's head is built on it), and the trip turn's end (where the user's checkpoint resumes).
    const ends = [];
    for (const b of branches) ends.push(idOf(await saver.configFor({ branchId: b.id })));
    const kept = await listed(saver, thread("t"));
    expect([...kept].sort()).toEqual([ends[0]!, ends[1]!, idOf(afterFirst.config), tripEnd].sort());
    expect(lgBefore).toBe(12);
    // The forkpoint checkpoints the branches fork from are all still there.
    for (const b of await s.branches()) if (b.forkCheckpointId) expect(await s.restore(b.forkCheckpointId)).toBeDefined();
    for (const b of branches) {
      await s.switchBranch(b.id);
      expect((await graph.getState(thread("t"))).values, b.id).toEqual(statesBefore.get(b.id));
    }
    // Each branch goes on from its end.
    await s.switchBranch(branches[0]!.id);
    expect(texts((await graph.invoke(say("and then?"), thread("t"))).messages).slice(-3)).toEqual([
      "ai:echo: book it",
      "human:and then?",
      "ai:echo: and then?",
    ]);
    await s.switchBranch(branches[2]!.id);
    expect(texts((await graph.invoke(say("outdoors"), thread("t"))).messages)).toEqual([
      "human:hi",
      "ai:echo: hi",
      "human:plan a picnic",
      "human:outdoors",
      "ai:echo: outdoors",
    ]);
    // A rollback to the user's own checkpoint resumes at the end of the trip turn.
    await s.rollback(saved.id);
    expect(texts((await graph.invoke(say("cheaper?"), thread("t"))).messages)).toEqual([
      "human:hi",
      "ai:echo: hi",
      "human:plan a trip",
      "ai:echo: plan a trip",
      "human:cheaper?",
      "ai:echo: cheaper?",
    ]);
    await verified(fp);
  });

  it("keeps the ancestors a DeltaChannel is rebuilt from: the next run reads the same value an unpruned thread does", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const State = new StateSchema({
      messages: MessagesValue,
      log: new DeltaValue(
        z.array(z.string()).default(() => []),
        { inputSchema: z.string(), reducer: (current: string[], writes: string[]) => [...current, ...writes], snapshotFrequency: 3 },
      ),
    });
    const graph = new StateGraph(State)
      .addNode("bot", (state) => ({ messages: [new AIMessage(`echo ${state.messages.length}`)], log: `bot ${state.messages.length}` }))
      .addEdge(START, "bot")
      .addEdge("bot", END)
      .compile({ checkpointer: saver });
    for (const t of ["pruned", "kept"]) for (const text of ["a", "b", "c", "d"]) await graph.invoke({ ...say(text), log: text }, thread(t));
    const before = (await graph.getState(thread("pruned"))).values;
    const all = await listed(saver, thread("pruned"));
    await saver.prune(["pruned"]);
    const kept = await listed(saver, thread("pruned"));
    expect(kept.length).toBeGreaterThan(1);
    expect(kept.length).toBeLessThan(all.length);
    expect((await graph.getState(thread("pruned"))).values).toEqual(before);
    const pruned = await graph.invoke({ ...say("e"), log: "e" }, thread("pruned"));
    const control = await graph.invoke({ ...say("e"), log: "e" }, thread("kept"));
    expect(pruned.log).toEqual(control.log);
    expect(pruned.log).toEqual(["a", "bot 1", "b", "bot 3", "c", "bot 5", "d", "bot 7", "e", "bot 9"]);
    await verified(fp);
  });

  it("a thread whose messages are LangGraph's deltas (MessagesDeltaValue) keeps its conversation", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const graph = new StateGraph(new StateSchema({ messages: MessagesDeltaValue }))
      .addNode("bot", (state) => ({ messages: [new AIMessage(`echo: ${String(state.messages.at(-1)!.content)}`)] }))
      .addEdge(START, "bot")
      .addEdge("bot", END)
      .compile({ checkpointer: saver });
    for (const text of ["one", "two", "three"]) await graph.invoke({ messages: [new HumanMessage(text)] }, thread("d"));
    await saver.prune(["d"]);
    const out = await graph.invoke({ messages: [new HumanMessage("four")] }, thread("d"));
    expect(texts(out.messages)).toEqual([
      "human:one",
      "ai:echo: one",
      "human:two",
      "ai:echo: two",
      "human:three",
      "ai:echo: three",
      "human:four",
      "ai:echo: four",
    ]);
    await verified(fp);
  });

  it("a subgraph waiting at an interrupt: each namespace keeps its latest, and the run resumes inside the subgraph", async () => {
    const { fp, path } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const inner = new StateGraph(new StateSchema({ messages: MessagesValue }))
      .addNode("ask", () => ({ messages: [new AIMessage(`inner: ${interrupt("approve?") as string}`)] }))
      .addEdge(START, "ask")
      .addEdge("ask", END)
      .compile();
    const graph = new StateGraph(new StateSchema({ messages: MessagesValue }))
      .addNode("sub", inner)
      .addNode("done", () => ({ messages: [new AIMessage("outer done")] }))
      .addEdge(START, "sub")
      .addEdge("sub", "done")
      .addEdge("done", END)
      .compile({ checkpointer: saver });
    await graph.invoke(say("first"), thread("n"));
    await graph.invoke(new Command({ resume: "one" }), thread("n"));
    await graph.invoke(say("second"), thread("n"));
    expect((await graph.getState(thread("n"))).next).toEqual(["sub"]);
    const namespaces = await sqlOn<{ ns: string }>(path, "SELECT checkpoint_ns AS ns FROM lg_threads ORDER BY checkpoint_ns");
    expect(namespaces.length).toBeGreaterThan(1);
    await saver.prune(["n"]);
    await verified(fp);
    for (const { ns } of namespaces) expect(await listed(saver, thread("n", undefined, ns)), ns).toHaveLength(1);
    const out = await graph.invoke(new Command({ resume: "two" }), thread("n"));
    expect(texts(out.messages)).toEqual([
      "human:first",
      "ai:inner: one",
      "ai:outer done",
      "human:second",
      "ai:inner: two",
      "ai:outer done",
    ]);
  });
  it("a subgraph a kept checkpoint waited on keeps where it waited, beside its latest; one nothing waits on keeps its latest", async () => {
    const { fp, path } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const inner = new StateGraph(new StateSchema({ messages: MessagesValue }))
      .addNode("ask", () => ({ messages: [new AIMessage(`inner: ${interrupt("approve?") as string}`)] }))
      .addEdge(START, "ask")
      .addEdge("ask", END)
      .compile();
    const graph = new StateGraph(new StateSchema({ messages: MessagesValue }))
      .addNode("sub", inner)
      .addNode("done", () => ({ messages: [new AIMessage("outer done")] }))
      .addEdge(START, "sub")
      .addEdge("sub", "done")
      .addEdge("done", END)
      .compile({ checkpointer: saver });
    await graph.invoke(say("first"), thread("n"));
    await graph.invoke(new Command({ resume: "one" }), thread("n"));
    await graph.invoke(say("second"), thread("n"));
    const s = await saver.sessionFor("n");
    // A user's checkpoint while the second run waits in the subgraph: what a rollback goes back to.
    const waiting = await s.checkpoint({ name: "waiting in the subgraph" });
    await graph.invoke(new Command({ resume: "two" }), thread("n"));
    await s.rollback(waiting.id);
    const namespaces = await sqlOn<{ ns: string }>(
      path,
      "SELECT checkpoint_ns AS ns FROM lg_threads WHERE checkpoint_ns <> '' ORDER BY checkpoint_ns",
    );
    expect(namespaces).toHaveLength(2);
    const before = await Promise.all(namespaces.map(({ ns }) => listed(saver, thread("n", undefined, ns))));
    await saver.prune(["n"]);
    await verified(fp);
    const after = await Promise.all(namespaces.map(({ ns }) => listed(saver, thread("n", undefined, ns))));
    // The first run's subgraph: nothing kept waits on it, so its latest alone. The second's: its latest (where it
    // finished), and where it waited, which the head the rollback moved to reads.
    const sizes = after.map((ids) => ids.length).sort();
    expect(sizes).toEqual([1, 2]);
    after.forEach((ids, i) => expect(ids[0]).toBe(before[i]![0]));
    const state = await graph.getState(thread("n"));
    expect(state.next).toEqual(["sub"]);
    expect(state.tasks[0]?.interrupts[0]?.value).toBe("approve?");
    const out = await graph.invoke(new Command({ resume: "three" }), thread("n"));
    expect(texts(out.messages)).toEqual([
      "human:first",
      "ai:inner: one",
      "ai:outer done",
      "human:second",
      "ai:inner: three",
      "ai:outer done",
    ]);
  });
});

describe("keep_latest and DeltaChannels across forkpoint's own changes", () => {
  it("a thread whose head a forkpoint state change moved: its DeltaChannel reads the same, pruned or not", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const State = new StateSchema({
      messages: MessagesValue,
      log: new DeltaValue(
        z.array(z.string()).default(() => []),
        { inputSchema: z.string(), reducer: (current: string[], writes: string[]) => [...current, ...writes], snapshotFrequency: 50 },
      ),
    });
    const graph = new StateGraph(State)
      .addNode("bot", (state) => ({ messages: [new AIMessage(`echo ${state.messages.length}`)], log: `bot ${state.messages.length}` }))
      .addEdge(START, "bot")
      .addEdge("bot", END)
      .compile({ checkpointer: saver });
    for (const t of ["pruned", "kept"]) {
      for (const text of ["a", "b"]) await graph.invoke(say(text), thread(t));
      // A change through forkpoint: the thread's head is a point no LangGraph checkpoint marks, the next run goes on from it.
      await (await saver.sessionFor(t)).setState({ note: "set by the app" });
      await graph.invoke(say("c"), thread(t));
    }
    await saver.prune(["pruned"]);
    expect(await listed(saver, thread("pruned"))).not.toEqual(await listed(saver, thread("kept")));
    const pruned = await graph.invoke(say("d"), thread("pruned"));
    const control = await graph.invoke(say("d"), thread("kept"));
    expect(pruned.log).toEqual(control.log);
    expect(pruned.log).toEqual(["bot 1", "bot 3", "bot 5", "bot 7"]);
    await verified(fp);
  });
});
