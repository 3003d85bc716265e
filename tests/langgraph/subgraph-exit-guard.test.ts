// A run with a subgraph under durability "exit". A `checkpointer: true` subgraph puts when it ends, before its parent:
// when another server moved the thread meanwhile, that put is refused (SESSION_MOVED) as the parent's is, so the stopped
// run does not live on in the subgraph's history; time travel from an older checkpoint goes on from it. A
// subgraph node's tool call on the thread's session in a time-travel run is refused as a root node's is (the run's one
// put forks away from it), before it is journaled.
import { AIMessage } from "@langchain/core/messages";
import { MessagesAnnotation, START, StateGraph, type BaseCheckpointSaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ConflictError } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { aroundWrites } from "../fixtures/around-writes.js";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { latch, say, texts } from "./helpers.js";

const dbs = tempDatabases();
const exit = { configurable: { thread_id: "t" }, durability: "exit" as const };

/**
 * A root graph whose "sub" node is a subgraph (keeping its own history unless `own` is false); its inner node waits for
 * `hook.wait`, then runs `hook.call`.
 */
function graphWithSub(
  saver: BaseCheckpointSaver,
  hook: { wait?: () => Promise<void>; reached?: () => void; call?: () => Promise<void> } = {},
  own = true,
) {
  const sub = new StateGraph(MessagesAnnotation)
    .addNode("inner", async () => {
      hook.reached?.();
      await hook.wait?.();
      await hook.call?.();
      return { messages: [new AIMessage("inner")] };
    })
    .addEdge(START, "inner")
    .compile(own ? { checkpointer: true } : {});
  return new StateGraph(MessagesAnnotation)
    .addNode("first", () => ({ messages: [new AIMessage("first")] }))
    .addNode("sub", sub)
    .addEdge(START, "first")
    .addEdge("first", "sub")
    .compile({ checkpointer: saver });
}

/** Runs "hi", a user's checkpoint after it, then "two": the thread's session, that checkpoint, the subgraph's session and history. */
async function twoRuns(graph: ReturnType<typeof graphWithSub>, saver: ForkpointSaver) {
  await graph.invoke(say("hi"), exit);
  const s = await saver.sessionFor("t", { userId: "alice" });
  const cp = await s.checkpoint({ name: "after hi" });
  await graph.invoke(say("two"), exit);
  const subSession = await saver.sessionFor("t", { userId: "alice", checkpointNs: "sub" });
  return { s, cp, subSession, subBefore: (await subSession.history()).map((m) => m.content) };
}

/** Runs "hi", "two", "three", then a run from the checkpoint after "two" (time travel); its messages. */
async function timeTravel(saver: BaseCheckpointSaver) {
  const graph = graphWithSub(saver);
  for (const text of ["hi", "two", "three"]) await graph.invoke(say(text), exit);
  const states = [];
  for await (const state of graph.getStateHistory(exit)) states.push(state);
  const older = states.find((st) => texts(st.values.messages ?? []).join() === "human:hi,ai:first,ai:inner,human:two,ai:first,ai:inner")!;
  return texts((await graph.invoke(say("tt"), { ...older.config, durability: "exit" })).messages);
}

describe('a subgraph\'s put under durability "exit" when another server moved the thread', () => {
  it("the run stops with SESSION_MOVED and the subgraph's history holds nothing of it", async () => {
    const { fp, path } = dbs.open();
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    let gate = latch();
    gate.open();
    let reached = latch();
    const graph = graphWithSub(saver, { wait: () => gate.wait(), reached: () => reached.open() });
    const { s, cp, subSession, subBefore } = await twoRuns(graph, saver);
    expect(subBefore).toEqual(["hi", "first", "inner", "two", "first", "inner"]);
    gate = latch();
    reached = latch();
    const running = graph.invoke(say("plan"), exit);
    running.catch(() => undefined);
    await reached.wait(); // the subgraph's node waits
    const other = await dbs.open({ path }).fp.getSession(s.id, { userId: "alice" });
    const moved = await other.rollback(cp.id);
    gate.open();
    const error = await rejectionOf(running);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ code: "SESSION_MOVED" });
    // Nothing written: neither the thread nor its subgraph's namespace holds the stopped run.
    expect((await subSession.history()).map((m) => m.content)).toEqual(subBefore);
    expect(await subSession.branches()).toHaveLength(1);
    expect((await s.info()).currentBranchId).toBe(moved.branch.id);
    expect((await s.history()).map((m) => m.content)).toEqual(["hi", "first", "inner"]);
    // The next run goes on from where the thread was moved; the stopped run's input is nowhere in it.
    const next = texts((await graph.invoke(say("again"), exit)).messages);
    expect(next).not.toContain("human:plan");
    expect(next.slice(0, 5)).toEqual(["human:hi", "ai:first", "ai:inner", "human:again", "ai:first"]);
    expect(await fp.verify()).toMatchObject({ ok: true });
  }, 30_000);

  it("a move landing between the subgraph put's check and its write stops the run too", async () => {
    const { fp, path } = dbs.open();
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    let reached = latch();
    const graph = graphWithSub(saver, { reached: () => reached.open() });
    const { s, cp, subSession, subBefore } = await twoRuns(graph, saver);
    reached = latch();
    const other = await dbs.open({ path }).fp.getSession(s.id, { userId: "alice" });
    let moved: Awaited<ReturnType<typeof other.rollback>> | undefined;
    const running = graph.invoke(say("plan"), exit);
    running.catch(() => undefined);
    await reached.wait();
    // The run's first write is the subgraph's put, its parent run checked by then: the other server moves right here.
    aroundWrites(fp, "before", async () => {
      moved = await other.rollback(cp.id);
      return true;
    });
    expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
    expect((await subSession.history()).map((m) => m.content)).toEqual(subBefore);
    expect((await s.info()).currentBranchId).toBe(moved!.branch.id);
    expect(await fp.verify()).toMatchObject({ ok: true });
  }, 30_000);

  it("time travel from an older checkpoint (nobody moved the thread) goes on from it, the subgraph's memory too", async () => {
    const { fp } = dbs.open();
    // The subgraph's memory as the root's lineage keeps it, as under durability "sync" (`subgraph-memory.ts`): not the
    // later turn ("three") LangGraph's MemorySaver serves it (the latest before the run's new checkpoint).
    expect(await timeTravel(new ForkpointSaver(fp, { userId: "alice" }))).toEqual([
      ...["human:hi", "ai:first", "ai:inner", "human:two", "ai:first", "ai:inner"],
      ...["human:tt", "ai:first", "ai:inner"],
    ]);
  }, 30_000);

  for (const own of [true, false]) {
    it(`a subgraph node's call on the thread's session: refused in a time-travel run, kept otherwise (own history: ${own})`, async () => {
      const { fp } = dbs.open();
      const saver = new ForkpointSaver(fp, { userId: "alice" });
      const errors: unknown[] = [];
      let calling = false;
      const call = async () => {
        if (!calling) return;
        const s = await saver.sessionFor("t", { userId: "alice" });
        await s.recordToolCall({ tool: "note", args: {}, result: "ok" }).catch((error: unknown) => errors.push(error));
      };
      const graph = graphWithSub(saver, { call }, own);
      for (const text of ["hi", "two", "three"]) await graph.invoke(say(text), exit);
      const s = await saver.sessionFor("t", { userId: "alice" });
      // A run from the head: its call is recorded and stays.
      calling = true;
      await graph.invoke(say("four"), exit);
      expect(errors).toEqual([]);
      expect((await s.toolTrack()).map((t) => t.tool)).toEqual(["note"]);
      const states = [];
      for await (const state of graph.getStateHistory(exit)) states.push(state);
      const older = states.find(
        (st) => texts(st.values.messages ?? []).join() === "human:hi,ai:first,ai:inner,human:two,ai:first,ai:inner",
      )!;
      const out = await graph.invoke(say("tt"), { ...older.config, durability: "exit" });
      expect(errors).toHaveLength(1);
      expect(errors[0]).toBeInstanceOf(ConflictError);
      expect(errors[0]).toMatchObject({ code: "SESSION_MOVED" });
      expect(texts(out.messages)).toContain("human:tt");
      // Nothing journaled for it: the fork's lineage holds no call, and the one left behind only the first run's.
      expect(await s.toolTrack()).toEqual([]);
      expect(await fp.verify()).toMatchObject({ ok: true });
      // Under "async" the run's first put forks before its nodes run: the call is recorded on the fork and stays.
      errors.length = 0;
      await graph.invoke(say("tt2"), { ...older.config, durability: "async" });
      expect(errors).toEqual([]);
      expect((await s.toolTrack()).map((t) => t.tool)).toEqual(["note"]);
    }, 30_000);
  }
});
