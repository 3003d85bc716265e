// LangGraph's time travel takes a `checkpointer: true` subgraph (nested in another subgraph or not) back with the root.
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { Annotation, Command, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { sendTool } from "./helpers.js";

const dbs = tempDatabases();

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/**
 * The root runs subgraph "mid" (a memory one, or a plain one inheriting the checkpointer), which runs memory subgraph
 * "leaf", which asks "Q?" and sends its answer through the thread's session: the root's message lists the leaf's answers.
 */
function nestedGraph(saver: ForkpointSaver, mid: "memory" | "plain" | "none") {
  const leaf = new StateGraph(State)
    .addNode("ask", async () => {
      const answer = interrupt("Q?") as string;
      await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: answer });
      return { log: [answer] };
    })
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile({ checkpointer: true });
  // With none between, the root's node "mid" runs the leaf itself.
  if (mid === "none")
    return new StateGraph(State)
      .addNode("mid", async () => ({ messages: [new AIMessage(`[${(await leaf.invoke({ messages: [] })).log.join(",")}]`)] }))
      .addEdge(START, "mid")
      .addEdge("mid", END)
      .compile({ checkpointer: saver });
  const between = new StateGraph(State)
    .addNode("leaf", async () => ({ log: [`[${(await leaf.invoke({ messages: [] })).log.join(",")}]`] }))
    .addEdge(START, "leaf")
    .addEdge("leaf", END)
    .compile(mid === "memory" ? { checkpointer: true } : {});
  return new StateGraph(State)
    .addNode("mid", async () => ({ messages: [new AIMessage((await between.invoke({ messages: [] })).log.at(-1)!)] }))
    .addEdge(START, "mid")
    .addEdge("mid", END)
    .compile({ checkpointer: saver });
}

// Under "exit" the root's new checkpoint is not stored while the subgraphs run: they go on from the one travelled from.
describe.each(["sync", "async", "exit"] as const)("LangGraph time travel over nested subgraphs (durability %s)", (durability) => {
  it.each([
    ["a memory", "memory"],
    ["a plain", "plain"],
    ["no", "none"],
  ] as const)("forgets the turns after the checkpoint it goes on from, with %s subgraph between", async (_, mid) => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = nestedGraph(saver, mid);
    const config = { configurable: { thread_id: "t" }, durability };
    const turn = async (input: string, answer: string, from: typeof config = config) => {
      await graph.invoke({ messages: [new HumanMessage(input)] }, from);
      return String((await graph.invoke(new Command({ resume: answer }), config)).messages.at(-1)!.content);
    };
    expect(await turn("a", "y1")).toBe("[y1]");
    const afterOne = (await graph.getState(config)).config;
    expect(await turn("b", "y2")).toBe("[y1,y2]");
    expect(await turn("c", "y3")).toBe("[y1,y2,y3]");
    // Time travel: new input from the checkpoint after the first turn.
    const from = { ...afterOne, configurable: { ...afterOne.configurable, thread_id: "t" }, durability };
    expect(await turn("B", "z2", from)).toBe("[y1,z2]");
    expect(sent).toEqual(["y1", "z2"]);
    expect(await turn("C", "z3")).toBe("[y1,z2,z3]");
    expect(sent).toEqual(["y1", "z2", "z3"]);
  });
});
