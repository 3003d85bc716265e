// A graph that trims its history (RemoveMessage of the oldest messages, LangGraph's memory-guide pattern): trimming
// the model's context is no edit. The session keeps every message and every tool call on one branch; the graph reads
// back its trimmed list, with messages appended through forkpoint after it.
import { AIMessage, HumanMessage, RemoveMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { say, sendTool, texts } from "./helpers.js";

const dbs = tempDatabases();

/** Keeps only the last `n` messages. */
const keepLast = (n: number) => (state: { messages: BaseMessage[] }) => ({
  messages: state.messages.slice(0, -n).map((m) => new RemoveMessage({ id: m.id! })),
});

/** An agent that sends each user message through a journaling tool node, answers "done", then trims to the last 4. */
function trimmingAgent(saver: ForkpointSaver, interruptBefore: "tools"[] = []) {
  const send = tool(
    async ({ t }, config) =>
      (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t }, { callId: (config.toolCall as { id: string }).id }),
    { name: "send", description: "send", schema: z.object({ t: z.string() }) },
  );
  let n = 0;
  const agent = (state: typeof MessagesAnnotation.State) => {
    const last = state.messages.at(-1)!;
    if (last.getType() !== "human") return { messages: [new AIMessage("done")] };
    return {
      messages: [new AIMessage({ content: "", tool_calls: [{ id: `call_${++n}`, name: "send", args: { t: String(last.content) } }] })],
    };
  };
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", agent)
    .addNode("tools", new ToolNode([send]))
    .addNode("trim", keepLast(4))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", (s) => ((s.messages.at(-1) as AIMessage).tool_calls?.length ? "tools" : "trim"))
    .addEdge("tools", "agent")
    .addEdge("trim", END)
    .compile({ checkpointer: saver, interruptBefore });
}

describe.each(["async", "sync", "exit"] as const)('a graph trimming its history (durability "%s")', (durability) => {
  it("keeps every tool call and message on one branch; the graph reads its trimmed list", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = trimmingAgent(saver);
    // The thread's first run under "async" (under "exit" a first run has no session to journal on yet).
    await graph.invoke({ messages: [new HumanMessage("A")] }, { configurable: { thread_id: "t" }, durability: "async" });
    const config = { configurable: { thread_id: "t" }, durability };
    for (const q of ["B", "C"]) {
      const out = await graph.invoke({ messages: [new HumanMessage(q)] }, config);
      expect(texts(out.messages)).toEqual([`human:${q}`, "ai:", "tool:null", "ai:done"]);
    }
    expect(sent).toEqual(["A", "B", "C"]);
    const s = await saver.sessionFor("t", { userId: "alice" });
    expect((await s.toolTrack()).map((c) => c.callId)).toEqual(["call_1", "call_2", "call_3"]);
    expect(await s.branches()).toHaveLength(1);
    expect((await s.history()).map((m) => `${m.role}:${String(m.content)}`)).toEqual(
      ["A", "B", "C"].flatMap((q) => [`user:${q}`, "assistant:", "tool:null", "assistant:done"]),
    );
    expect(texts((await graph.getState(config)).values.messages)).toEqual(["human:C", "ai:", "tool:null", "ai:done"]);
  });
});

describe("a trimmed thread and forkpoint", () => {
  const config = { configurable: { thread_id: "t" } };

  function echoKeepingTwo(saver: ForkpointSaver) {
    return new StateGraph(MessagesAnnotation)
      .addNode("bot", (state) => ({ messages: [new AIMessage(`echo: ${String(state.messages.at(-1)!.content)}`)] }))
      .addNode("trim", keepLast(2))
      .addEdge(START, "bot")
      .addEdge("bot", "trim")
      .addEdge("trim", END)
      .compile({ checkpointer: saver });
  }

  it("a message appended through forkpoint goes after the trimmed list, in the graph and in its input checkpoint", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = echoKeepingTwo(saver);
    for (const q of ["A", "B", "C"]) await graph.invoke(say(q), config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    await s.append({ role: "user", content: "D" });
    expect(texts((await graph.getState(config)).values.messages)).toEqual(["human:C", "ai:echo: C", "human:D"]);
    const out = await graph.invoke(say("E"), config);
    expect(texts(out.messages)).toEqual(["human:E", "ai:echo: E"]);
    const history = [];
    for await (const st of graph.getStateHistory(config)) history.push(st);
    const input = history.find((st) => st.metadata?.source === "input")!;
    expect(texts(input.values.messages)).toEqual(["human:C", "ai:echo: C", "human:D"]);
    expect((await s.history()).map((m) => m.content)).toEqual(["A", "echo: A", "B", "echo: B", "C", "echo: C", "D", "E", "echo: E"]);
    expect(await s.branches()).toHaveLength(1);
  });

  it("an edit of a message the graph trimmed away is still an edit: a new branch from there", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = echoKeepingTwo(saver);
    for (const q of ["A", "B", "C"]) await graph.invoke(say(q), config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const b = (await s.history()).find((m) => m.content === "B")!;
    await s.edit(b.id, { content: "B2" });
    expect((await s.history()).map((m) => m.content)).toEqual(["A", "echo: A", "B2"]);
    expect(await s.branches()).toHaveLength(2);
    const state = await graph.getState(config);
    expect(texts(state.values.messages)).toEqual(["human:A", "ai:echo: A", "human:B2"]);
    const out = await graph.invoke(say("F"), config);
    expect(texts(out.messages)).toEqual(["human:F", "ai:echo: F"]);
    expect((await s.history()).map((m) => m.content)).toEqual(["A", "echo: A", "B2", "F", "echo: F"]);
  });

  it("an in-place edit of a message the trimmed list holds forks at that message, keeping earlier turns", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = echoKeepingTwo(saver);
    for (const q of ["A", "B", "C"]) await graph.invoke(say(q), config);
    const c = (await graph.getState(config)).values.messages.find((m: BaseMessage) => m.content === "C")!;
    await graph.updateState(config, { messages: [new HumanMessage({ id: c.id!, content: "C2" })] });
    const s = await saver.sessionFor("t", { userId: "alice" });
    expect((await s.history()).map((m) => m.content)).toEqual(["A", "echo: A", "B", "echo: B", "C2", "echo: C"]);
    expect(await s.branches()).toHaveLength(2);
    expect(texts((await graph.getState(config)).values.messages)).toEqual(["human:C2", "ai:echo: C"]);
  });

  it("reviewing a tool call (interruptBefore, updateState by id) in a trimmed thread keeps earlier calls", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = trimmingAgent(saver, ["tools"]);
    for (const q of ["A", "B", "C"]) {
      await graph.invoke({ messages: [new HumanMessage(q)] }, config);
      await graph.invoke(null, config);
    }
    await graph.invoke({ messages: [new HumanMessage("D-typo")] }, config);
    const ai = (await graph.getState(config)).values.messages.at(-1) as AIMessage;
    const call = { ...ai.tool_calls![0]!, args: { t: "D" } };
    await graph.updateState(config, { messages: [new AIMessage({ id: ai.id!, content: "", tool_calls: [call] })] });
    const out = await graph.invoke(null, config);
    expect(texts(out.messages)).toEqual(["human:D-typo", "ai:", "tool:null", "ai:done"]);
    expect(sent).toEqual(["A", "B", "C", "D"]);
    const s = await saver.sessionFor("t", { userId: "alice" });
    expect((await s.history()).map((m) => `${m.role}:${String(m.content)}`)).toEqual(
      ["A", "B", "C", "D-typo"].flatMap((q) => [`user:${q}`, "assistant:", "tool:null", "assistant:done"]),
    );
    expect((await s.toolTrack()).map((c) => c.callId)).toEqual(["call_1", "call_2", "call_3", "call_4"]);
  });
});
