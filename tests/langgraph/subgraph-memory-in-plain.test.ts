// A `checkpointer: true` subgraph inside a plain subgraph follows a rollback of the root: it waits again, not answered.
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
 * The root's node runs plain subgraph "mid" (it inherits the checkpointer; invoked in the node, or added as the node),
 * whose node runs memory subgraph "leaf", which asks "Q?" and sends its answer through the thread's session.
 */
function plainMidGraph(saver: ForkpointSaver, asNode: boolean) {
  const leaf = new StateGraph(State)
    .addNode("ask", async () => {
      const answer = interrupt("Q?") as string;
      await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: answer });
      return { log: [answer] };
    })
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile({ checkpointer: true });
  const mid = new StateGraph(State)
    .addNode("leaf", async () => ({ messages: [new AIMessage(`[${(await leaf.invoke({ messages: [] })).log.join(",")}]`)] }))
    .addEdge(START, "leaf")
    .addEdge("leaf", END)
    .compile();
  return new StateGraph(State)
    .addNode(
      "mid",
      asNode ? mid : async () => ({ messages: [new AIMessage(String((await mid.invoke({ messages: [] })).messages.at(-1)!.content))] }),
    )
    .addEdge(START, "mid")
    .addEdge("mid", END)
    .compile({ checkpointer: saver });
}

describe.each(["sync", "async", "exit"] as const)("a checkpointer: true subgraph in a plain subgraph (durability %s)", (durability) => {
  it.each([
    ["user", false],
    ["LangGraph", false],
    ["user", true],
    ["LangGraph", true],
  ] as const)("waits again after a rollback to the %s checkpoint at its wait (mid as node: %s)", async (which, asNode) => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = plainMidGraph(saver, asNode);
    const config = { configurable: { thread_id: "t" }, durability };
    const asked = async () => (await graph.getState(config, { subgraphs: true })).tasks.length > 0;
    const answer = async (value: string) => String((await graph.invoke(new Command({ resume: value }), config)).messages.at(-1)!.content);
    await graph.invoke({ messages: [new HumanMessage("go")] }, config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const waitingId = (await graph.getState(config)).config.configurable!.checkpoint_id as string;
    const mine = await s.checkpoint({ name: "waiting" });
    expect(await answer("y1")).toBe("[y1]");
    expect(sent).toEqual(["y1"]);
    const waiting = (await s.listCheckpoints({})).items.find(
      (c) => (c.metadata as { langgraph?: { checkpointId?: string } } | null)?.langgraph?.checkpointId === waitingId,
    )!;
    await s.rollback(which === "user" ? mine.id : waiting.id);
    expect(sent).toEqual([]);
    expect(await asked()).toBe(true);
    // The new answer is the one used, not the undone one: the leaf waited again at its question.
    expect(await answer("z1")).toBe("[z1]");
    expect(sent).toEqual(["z1"]);
    await graph.invoke({ messages: [new HumanMessage("more")] }, config);
    expect(await answer("w")).toBe("[z1,w]");
    expect(sent).toEqual(["z1", "w"]);
  });

  it("forgets a second turn's answer a rollback to a checkpoint at its wait undid", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = plainMidGraph(saver, false);
    const config = { configurable: { thread_id: "t" }, durability };
    const answer = async (value: string) => String((await graph.invoke(new Command({ resume: value }), config)).messages.at(-1)!.content);
    await graph.invoke({ messages: [new HumanMessage("a")] }, config);
    expect(await answer("y1")).toBe("[y1]");
    await graph.invoke({ messages: [new HumanMessage("b")] }, config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const mine = await s.checkpoint({ name: "waiting" });
    expect(await answer("y2")).toBe("[y1,y2]");
    await s.rollback(mine.id);
    expect(sent).toEqual(["y1"]);
    expect(await answer("z2")).toBe("[y1,z2]");
    expect(sent).toEqual(["y1", "z2"]);
  });
});
