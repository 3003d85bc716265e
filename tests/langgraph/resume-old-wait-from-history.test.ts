// Resuming an old wait picked from getStateHistory forks before the calls the old run made after that wait's step.
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { Log, say, sendTool, texts } from "./helpers.js";

const dbs = tempDatabases();

type Durability = "async" | "sync";

/** A snapshot of the thread's history that waits on an interrupt (the newest first, as getStateHistory lists). */
async function waitIn(graph: { getStateHistory: (config: object) => AsyncIterable<any> }, config: object) {
  for await (const snapshot of graph.getStateHistory(config)) {
    if (snapshot.tasks.some((t: { interrupts: unknown[] }) => t.interrupts.length > 0)) return snapshot;
  }
  throw new Error("no wait in the history");
}

/**
 * A createReactAgent-style graph: "agent" asks for `send` with the last human text after "do ", "approve" waits for an
 * approval (an interrupt), and a ToolNode's `send` journals its call through the thread's session by its call id.
 */
function reactGraph(saver: ForkpointSaver) {
  let n = 0;
  const send = tool(
    async (args: { t: string }, config: { toolCall?: { id?: string } }) => {
      const s = await saver.sessionFor("t", { userId: "alice" });
      await s.invoke("send", args, { callId: config.toolCall?.id });
      return `sent ${args.t}`;
    },
    { name: "send", description: "send", schema: z.object({ t: z.string() }) },
  );
  const agent = (messages: BaseMessage[]) => {
    const last = messages.at(-1)!;
    if (last.getType() === "tool") return new AIMessage(`done: ${String(last.content)}`);
    const text = String(last.content);
    if (!text.startsWith("do ")) return new AIMessage(`echo: ${text}`);
    return new AIMessage({ content: "", tool_calls: [{ id: `call_${++n}`, name: "send", args: { t: text.slice(3) }, type: "tool_call" }] });
  };
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", (state) => ({ messages: [agent(state.messages)] }))
    .addNode(
      "approve",
      () => {
        const answer = interrupt("ok?") as string;
        return new Command({ goto: answer === "yes" ? "tools" : END });
      },
      { ends: ["tools", END] },
    )
    .addNode("tools", new ToolNode([send]))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (state) => ((state.messages.at(-1) as AIMessage).tool_calls?.length ? "approve" : END))
    .addEdge("tools", "agent")
    .compile({ checkpointer: saver });
}

describe.each<Durability>(["async", "sync"])("resuming an old wait from the history (durability %s)", (durability) => {
  const config = { configurable: { thread_id: "t" }, durability };

  it("applies the approved tool once, not again after the old run's call", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = reactGraph(saver);
    await graph.invoke(say("do L1"), config);
    await graph.invoke(new Command({ resume: "yes" }), config);
    await graph.invoke(say("thanks"), config);
    expect(sent).toEqual(["L1"]);

    const wait = await waitIn(graph, config);
    const out = await graph.invoke(new Command({ resume: "yes" }), { ...wait.config, durability });
    expect(texts(out.messages)).toEqual(["human:do L1", "ai:", "tool:sent L1", "ai:done: sent L1"]);
    expect(sent).toEqual(["L1"]);
    const s = await saver.sessionFor("t", { userId: "alice" });
    expect((await s.toolTrack()).map((c) => [(c.args as { t: string }).t, c.callId, c.applied])).toEqual([["L1", "call_1", true]]);
    expect(texts((await graph.getState(config)).values.messages)).toEqual(texts(out.messages));
    expect((await fp.verify()).ok).toBe(true);
  });

  it("undoes the old run's call of a node that changes no message", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = new StateGraph(Log)
      .addNode("ask", () => ({ log: [`answer ${interrupt("ok?") as string}`] }))
      .addNode("act", async (state) => {
        const s = await saver.sessionFor("t", { userId: "alice" });
        await s.invoke("send", { t: state.log.at(-1)! });
        return { log: ["acted"] };
      })
      .addEdge(START, "ask")
      .addEdge("ask", "act")
      .addEdge("act", END)
      .compile({ checkpointer: saver });
    await graph.invoke({ log: ["start"] }, config);
    await graph.invoke(new Command({ resume: "yes" }), config);
    expect(sent).toEqual(["answer yes"]);

    const wait = await waitIn(graph, config);
    // LangGraph serves the wait's stored answer again (as with its MemorySaver): the step runs once more.
    const out = await graph.invoke(new Command({ resume: "yes" }), { ...wait.config, durability });
    expect(out.log).toEqual(["start", "answer yes", "acted"]);
    expect(sent).toEqual(["answer yes"]);
    const s = await saver.sessionFor("t", { userId: "alice" });
    expect((await s.toolTrack()).map((c) => [(c.args as { t: string }).t, c.applied])).toEqual([["answer yes", true]]);
    expect((await fp.verify()).ok).toBe(true);
  });
});
