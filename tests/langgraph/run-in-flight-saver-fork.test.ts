// A LangGraph run in flight left behind by another server's time travel (a saver's fork): it goes on beside the fork's
// own run, whatever messages that run writes, and stops once a later run (a turn, a resume) went on from the fork.
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { Annotation, Command, END, MessagesAnnotation, RunControl, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { LandingSaver, latch, say, sendTool, texts } from "./helpers.js";

const dbs = tempDatabases();
const thread = { configurable: { thread_id: "t" } };
const lastText = (messages: BaseMessage[]) => String(messages.at(-1)!.content);

/**
 * A graph whose "bot" node sends the last message through the thread's session ("wait…" first waits for a resume
 * value; "ask" asks twice, sending each answer), holding at `gate` after sending "plan"; its "critic" answers "did travel" with a user's critique (a
 * reflection loop back to "bot") when `reflect`.
 */
function botGraph(saver: ForkpointSaver, reflect: boolean, gate: () => Promise<void>, reached: () => void) {
  return new StateGraph(MessagesAnnotation)
    .addNode("bot", async (state) => {
      const text = lastText(state.messages);
      if (text === "ask") {
        const s = await saver.sessionFor("t", { userId: "alice" });
        const first = String(interrupt("Q1"));
        await s.invoke("send", { t: `a1=${first}` });
        const second = String(interrupt("Q2"));
        await s.invoke("send", { t: `a2=${second}` });
        return { messages: [new AIMessage(`a1=${first} a2=${second}`)] };
      }
      const sent = text.startsWith("wait") ? `resumed ${String(interrupt("go?"))}` : text;
      await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: sent });
      if (text === "plan") {
        reached();
        await gate();
      }
      return { messages: [new AIMessage(`did ${sent}`)] };
    })
    .addNode("critic", (state) =>
      reflect && lastText(state.messages) === "did travel" ? { messages: [new HumanMessage("critique")] } : {},
    )
    .addEdge(START, "bot")
    .addEdge("bot", "critic")
    .addConditionalEdges("critic", (state) => (lastText(state.messages) === "critique" ? "bot" : END))
    .compile({ checkpointer: saver });
}

const Passes = Annotation.Root({ ...MessagesAnnotation.spec, pass: Annotation<number>({ reducer: (_, b) => b, default: () => 0 }) });

/**
 * A graph whose node passes the last message through a memory subgraph (`checkpointer: true`) that sends it, holding
 * at `gate` after sending "plan"; after "travel" it passes a user's "refine" through the subgraph once more.
 */
function refiningGraph(saver: ForkpointSaver, gate: () => Promise<void>, reached: () => void) {
  const sub = new StateGraph(MessagesAnnotation)
    .addNode("inner", async (state) => {
      const text = lastText(state.messages);
      await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: text });
      if (text === "plan") {
        reached();
        await gate();
      }
      return { messages: [new AIMessage(`did ${text}`)] };
    })
    .addEdge(START, "inner")
    .compile({ checkpointer: true });
  return new StateGraph(Passes)
    .addNode("sub", async (state) => {
      const input = state.pass === 0 ? state.messages.at(-1)! : new HumanMessage("refine");
      const out = await sub.invoke({ messages: [input] });
      return { messages: [out.messages.at(-1)!], pass: state.pass + 1 };
    })
    .addNode("reset", () => ({ pass: 0 }))
    .addEdge(START, "sub")
    .addConditionalEdges("sub", (state) => (state.pass === 1 && state.messages.some((m) => m.content === "travel") ? "sub" : "reset"))
    .addEdge("reset", END)
    .compile({ checkpointer: saver });
}

describe("a LangGraph run in flight left behind by another server's time travel", () => {
  /**
   * A thread after one turn (hi) with a run (plan) held in flight after its call, and another server's graph on the
   * same database, with the config of the checkpoint after hi to travel from.
   */
  async function leftBehind(
    reflect = false,
    other: { gate: () => Promise<void>; reached: () => void } = { gate: async () => {}, reached: () => {} },
  ) {
    const sent: string[] = [];
    const { fp, path } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new LandingSaver(fp, { userId: "alice" });
    const gate = latch();
    const reached = latch();
    const graph = botGraph(saver, reflect, gate.wait, reached.open);
    await graph.invoke(say("hi"), { ...thread, durability: "sync" });
    const otherFp = dbs.open({ path, tools: [sendTool(sent)] }).fp;
    const otherSaver = new ForkpointSaver(otherFp, { userId: "alice" });
    const otherGraph = botGraph(otherSaver, reflect, other.gate, other.reached);
    const running = graph.invoke(say("plan"), thread);
    running.catch(() => undefined);
    await reached.wait(); // "bot" sent "plan" and waits
    await saver.settledWith(3);
    expect(sent).toEqual(["hi", "plan"]);
    const history = [];
    for await (const state of otherGraph.getStateHistory(thread)) history.push(state);
    const afterHi = history.find((state) => state.values.messages.length === 2 && state.next.length === 0)!;
    const s = await saver.sessionFor("t", { userId: "alice" });
    return { sent, graph, otherGraph, otherSaver, s, running, release: gate.open, afterHi };
  }

  it("the fork's run loops a critic's user message back: both runs finish", async () => {
    const { sent, graph, otherGraph, running, release, afterHi } = await leftBehind(true);
    const travelled = await otherGraph.invoke(say("travel"), afterHi.config);
    expect(texts(travelled.messages).slice(2)).toEqual(["human:travel", "ai:did travel", "human:critique", "ai:did critique"]);
    release();
    await running;
    expect(sent).toEqual(["hi", "plan"]);
    const state = (await graph.getState(thread)).values.messages;
    expect(texts(state)).toEqual(["human:hi", "ai:did hi", "human:plan", "ai:did plan"]);
  }, 30_000);

  it("a resume from the thread goes on from the fork: the run stops; the resume's call stays", async () => {
    const { sent, graph, otherGraph, s, running, release, afterHi } = await leftBehind();
    await otherGraph.invoke(say("wait"), afterHi.config);
    const fork = (await s.info()).currentBranchId;
    await otherGraph.invoke(new Command({ resume: "yes" }), thread);
    release();
    expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
    expect((await s.info()).currentBranchId).toBe(fork);
    expect(sent).toEqual(["hi", "resumed yes"]);
    const state = (await graph.getState(thread)).values.messages;
    expect(texts(state)).toEqual(["human:hi", "ai:did hi", "human:wait", "ai:did resumed yes"]);
  }, 30_000);

  it("a resume on the fork that stops at the node's next question: the run stops; the resume's call stays", async () => {
    const { sent, graph, otherGraph, s, running, release, afterHi } = await leftBehind();
    await otherGraph.invoke(say("ask"), afterHi.config);
    const fork = (await s.info()).currentBranchId;
    // It answers Q1, sends, and waits at Q2: it puts no checkpoint of its own.
    await otherGraph.invoke(new Command({ resume: "yes" }), thread);
    release();
    expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
    expect((await s.info()).currentBranchId).toBe(fork);
    expect(sent).toEqual(["hi", "a1=yes"]);
    const waits = (await graph.getState(thread)).tasks.flatMap((t) => t.interrupts.map((i) => i.value));
    expect(waits).toEqual(["Q2"]);
    await otherGraph.invoke(new Command({ resume: "ok" }), thread);
    const state = (await graph.getState(thread)).values.messages;
    expect(texts(state)).toEqual(["human:hi", "ai:did hi", "human:ask", "ai:a1=yes a2=ok"]);
  }, 30_000);

  it('a later turn on the fork under durability "exit", in flight after its call: the run stops; the turn goes on', async () => {
    const gate = latch();
    const reached = latch();
    const { sent, graph, otherGraph, s, running, release, afterHi } = await leftBehind(false, { gate: gate.wait, reached: reached.open });
    await otherGraph.invoke(say("travel"), afterHi.config);
    const fork = (await s.info()).currentBranchId;
    // It puts nothing before it ends: only its call is on the fork.
    const later = otherGraph.invoke(say("plan"), { ...thread, durability: "exit" });
    await reached.wait();
    release();
    expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
    expect((await s.info()).currentBranchId).toBe(fork);
    expect(sent).toEqual(["hi", "travel", "plan"]);
    gate.open();
    await later;
    const state = (await graph.getState(thread)).values.messages;
    const expected = ["human:hi", "ai:did hi", "human:travel", "ai:did travel", "human:plan", "ai:did plan"];
    expect(texts(state)).toEqual(expected);
  }, 30_000);

  it("the other server shares one RunControl among its invokes: a later turn on the fork still stops the run", async () => {
    const { sent, graph, otherGraph, s, running, release, afterHi } = await leftBehind();
    const control = new RunControl();
    await otherGraph.invoke(say("travel"), { ...afterHi.config, control });
    await otherGraph.invoke(say("later"), { ...thread, control });
    const fork = (await s.info()).currentBranchId;
    release();
    expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
    expect((await s.info()).currentBranchId).toBe(fork);
    expect(sent).toEqual(["hi", "travel", "later"]);
    const state = (await graph.getState(thread)).values.messages;
    const expected = ["human:hi", "ai:did hi", "human:travel", "ai:did travel", "human:later", "ai:did later"];
    expect(texts(state)).toEqual(expected);
  }, 30_000);

  it("a later turn on the fork, then a prune of the fork's first checkpoints: the run stops; the turn stays", async () => {
    const { sent, graph, otherGraph, otherSaver, s, running, release, afterHi } = await leftBehind();
    await otherGraph.invoke(say("travel"), afterHi.config);
    await otherGraph.invoke(say("later"), thread);
    // keep_latest drops the fork's own run's checkpoints: the turn's are all it keeps on the fork's branch.
    await otherSaver.prune(["t"]);
    const fork = (await s.info()).currentBranchId;
    release();
    expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
    expect((await s.info()).currentBranchId).toBe(fork);
    expect(sent).toEqual(["hi", "travel", "later"]);
    const state = (await graph.getState(thread)).values.messages;
    const expected = ["human:hi", "ai:did hi", "human:travel", "ai:did travel", "human:later", "ai:did later"];
    expect(texts(state)).toEqual(expected);
  }, 30_000);

  it("the fork's run passes a user's message through a memory subgraph twice: both runs finish", async () => {
    const sent: string[] = [];
    const { fp, path } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const gate = latch();
    const reached = latch();
    const graph = refiningGraph(saver, gate.wait, reached.open);
    await graph.invoke(say("hi"), { ...thread, durability: "sync" });
    const otherSaver = new ForkpointSaver(dbs.open({ path, tools: [sendTool(sent)] }).fp, { userId: "alice" });
    const otherGraph = refiningGraph(
      otherSaver,
      async () => undefined,
      () => undefined,
    );
    // Under "sync" the root's input checkpoint is in before its node runs.
    const running = graph.invoke(say("plan"), { ...thread, durability: "sync" });
    running.catch(() => undefined);
    await reached.wait();
    const history = [];
    for await (const state of otherGraph.getStateHistory(thread)) history.push(state);
    const afterHi = history.find((state) => state.values.messages.length === 2 && state.next.length === 0)!;
    const travelled = await otherGraph.invoke(say("travel"), afterHi.config);
    expect(texts(travelled.messages).slice(2)).toEqual(["human:travel", "ai:did travel", "ai:did refine"]);
    gate.open();
    await running;
    expect(sent).toEqual(["hi", "plan"]);
    const state = (await graph.getState(thread)).values.messages;
    expect(texts(state)).toEqual(["human:hi", "ai:did hi", "human:plan", "ai:did plan"]);
  }, 30_000);

  it("a user's edit of a past message (updateState at an older checkpoint): the run stops; the edit stays", async () => {
    const { sent, graph, otherGraph, s, running, release, afterHi } = await leftBehind();
    await otherGraph.updateState(afterHi.config, { messages: [new HumanMessage("edited")] });
    const fork = (await s.info()).currentBranchId;
    release();
    expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
    expect((await s.info()).currentBranchId).toBe(fork);
    expect(sent).toEqual(["hi"]);
    const state = (await graph.getState(thread)).values.messages;
    expect(texts(state)).toEqual(["human:hi", "ai:did hi", "human:edited"]);
  }, 30_000);

  it("an answer corrected on the fork's state (updateState with an AI message): the run stops; the answer stays", async () => {
    const { sent, graph, otherGraph, s, running, release, afterHi } = await leftBehind();
    await otherGraph.invoke(say("travel"), afterHi.config);
    await otherGraph.updateState(thread, { messages: [new AIMessage("corrected")] });
    const fork = (await s.info()).currentBranchId;
    release();
    expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
    expect((await s.info()).currentBranchId).toBe(fork);
    expect(sent).toEqual(["hi", "travel"]);
    const state = (await graph.getState(thread)).values.messages;
    expect(texts(state)).toEqual(["human:hi", "ai:did hi", "human:travel", "ai:did travel", "ai:corrected"]);
  }, 30_000);

  it("a user's message set on the fork's state: the run stops; the message stays", async () => {
    const { sent, graph, otherGraph, s, running, release, afterHi } = await leftBehind();
    await otherGraph.invoke(say("travel"), afterHi.config);
    await otherGraph.updateState(thread, { messages: [new HumanMessage("note")] });
    const fork = (await s.info()).currentBranchId;
    release();
    expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
    expect((await s.info()).currentBranchId).toBe(fork);
    expect(sent).toEqual(["hi", "travel"]);
    const state = (await graph.getState(thread)).values.messages;
    expect(texts(state)).toEqual(["human:hi", "ai:did hi", "human:travel", "ai:did travel", "human:note"]);
  }, 30_000);
});
