// A run under durability "exit" left behind in a subgraph by another server's time travel: its next call is refused
// (SESSION_MOVED) before it runs, its one put too, and the fork keeps the thread and its calls.
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { latch, say, sendTool, texts } from "./helpers.js";

const dbs = tempDatabases();
const thread = { configurable: { thread_id: "t" } };

/** A graph whose subgraph's "s1" sends the last message and holds at `gate` on "plan"; its "s2" then sends "s2 …". */
function subGraph(saver: ForkpointSaver, gate: () => Promise<void>, reached: () => void) {
  const send = async (t: string) => (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t });
  const sub = new StateGraph(MessagesAnnotation)
    .addNode("s1", async (state) => {
      const text = String(state.messages.at(-1)!.content);
      await send(text);
      if (text === "plan") {
        reached();
        await gate();
      }
      return { messages: [new AIMessage(`s1 ${text}`)] };
    })
    .addNode("s2", async (state) => {
      const text = String(state.messages.at(-2)!.content);
      await send(`s2 ${text}`);
      return { messages: [new AIMessage(`s2 ${text}`)] };
    })
    .addEdge(START, "s1")
    .addEdge("s1", "s2")
    .addEdge("s2", END)
    .compile();
  return new StateGraph(MessagesAnnotation).addNode("sub", sub).addEdge(START, "sub").addEdge("sub", END).compile({ checkpointer: saver });
}

describe('a run under durability "exit" left behind in a subgraph by another server\'s time travel', () => {
  it("its next call is refused before it runs; the fork keeps the thread", async () => {
    const sent: string[] = [];
    const { fp, path } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const gate = latch();
    const reached = latch();
    const graph = subGraph(saver, gate.wait, reached.open);
    await graph.invoke(say("hi"), { ...thread, durability: "sync" });
    await graph.invoke(say("two"), { ...thread, durability: "sync" });
    const otherSaver = new ForkpointSaver(dbs.open({ path, tools: [sendTool(sent)] }).fp, { userId: "alice" });
    const otherGraph = subGraph(
      otherSaver,
      async () => {},
      () => {},
    );
    const running = graph.invoke(say("plan"), { ...thread, durability: "exit" });
    running.catch(() => undefined);
    await reached.wait();
    const history = [];
    for await (const state of otherGraph.getStateHistory(thread)) history.push(state);
    const afterHi = history.find((state) => state.values.messages.length === 3 && state.next.length === 0)!;
    await otherGraph.invoke({ messages: [new HumanMessage("travel")] }, { ...afterHi.config, durability: "async" });
    const s = await saver.sessionFor("t", { userId: "alice" });
    const fork = (await s.info()).currentBranchId;
    gate.open();
    expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
    await graph.getState(thread);
    expect((await s.info()).currentBranchId).toBe(fork);
    expect(sent).toEqual(["hi", "s2 hi", "travel", "s2 travel"]);
    expect((await s.toolTrack()).filter((t) => t.applied).map((t) => (t.args as { t: string }).t)).toEqual([
      "hi",
      "s2 hi",
      "travel",
      "s2 travel",
    ]);
    const state = (await graph.getState(thread)).values.messages;
    expect(texts(state)).toEqual(["human:hi", "ai:s1 hi", "ai:s2 hi", "human:travel", "ai:s1 travel", "ai:s2 travel"]);
  }, 30_000);

  it("another run of the thread that lands first stops it at its next call; that run's turn stays", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const gate = latch();
    const reached = latch();
    const graph = subGraph(saver, gate.wait, reached.open);
    await graph.invoke(say("hi"), { ...thread, durability: "sync" });
    const running = graph.invoke(say("plan"), { ...thread, durability: "exit" });
    running.catch(() => undefined);
    await reached.wait();
    await graph.invoke(say("later"), { ...thread, durability: "exit" });
    gate.open();
    expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
    await graph.getState(thread);
    expect(sent).not.toContain("s2 plan");
    const state = (await graph.getState(thread)).values.messages;
    expect(texts(state)).toEqual(["human:hi", "ai:s1 hi", "ai:s2 hi", "human:later", "ai:s1 later", "ai:s2 later"]);
  }, 30_000);
});
