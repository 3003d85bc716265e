// One RunControl an app passes to every call of its graph, on two threads whose turns run at once: a getState or
// updateState with the control afterwards is served as its own thread's, never as the other thread's run.
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, RunControl, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { latch, say, sendTool, texts } from "./helpers.js";

const dbs = tempDatabases();

describe("one RunControl shared by the turns of two threads", () => {
  it("after turns of both threads at once, getState and updateState with the control serve each thread", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    // Each node of the turns at once waits for the other's, so both runs have started before either's step lands.
    let hold = async (_thread: string): Promise<unknown> => undefined;
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("bot", async (state, config) => {
        const thread = String(config.configurable!.thread_id);
        const text = String(state.messages.at(-1)!.content);
        await (await saver.sessionFor(thread, { userId: "alice" })).invoke("send", { t: text });
        await hold(thread);
        return { messages: [new AIMessage(`did ${text}`)] };
      })
      .addEdge(START, "bot")
      .addEdge("bot", END)
      .compile({ checkpointer: saver });
    const control = new RunControl();
    const config = (thread: string) => ({ configurable: { thread_id: thread }, durability: "sync" as const, control });
    await graph.invoke(say("a0"), config("a"));
    await graph.invoke(say("b0"), config("b"));
    const reached: Record<string, ReturnType<typeof latch>> = { a: latch(), b: latch() };
    hold = (thread) => {
      reached[thread]!.open();
      return Promise.all([reached.a!.wait(), reached.b!.wait()]);
    };
    await Promise.all([graph.invoke(say("a1"), config("a")), graph.invoke(say("b1"), config("b"))]);

    for (const thread of ["a", "b"]) {
      const state = await graph.getState(config(thread));
      expect(texts(state.values.messages)).toEqual([`human:${thread}0`, `ai:did ${thread}0`, `human:${thread}1`, `ai:did ${thread}1`]);
      await graph.updateState(config(thread), { messages: [new HumanMessage(`note ${thread}`)] }, "bot");
    }
    for (const thread of ["a", "b"]) {
      const state = await graph.getState({ configurable: { thread_id: thread } });
      expect(texts(state.values.messages).slice(-1)).toEqual([`human:note ${thread}`]);
    }
    expect([...sent].sort()).toEqual(["a0", "a1", "b0", "b1"]);
  }, 30_000);
});
