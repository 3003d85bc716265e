// A plain subgraph inside a `checkpointer: true` one follows a rollback of the root: its memory leaf waits again.
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
 * The root's node runs the subgraphs `shape` names outermost first ("M": `checkpointer: true`, "P": plain, invoked in
 * a node each), down to its last, a memory leaf that asks "Q?" and sends its answer through the thread's session.
 */
function shapedGraph(saver: ForkpointSaver, shape: string) {
  const options = (c: string) => (c === "M" ? { checkpointer: true as const } : {});
  const leaf = new StateGraph(State)
    .addNode("ask", async () => {
      const answer = interrupt("Q?") as string;
      await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: answer });
      return { log: [answer] };
    })
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile({ checkpointer: true });
  // Each graph above the leaf passes on the leaf's answers so far as one entry.
  let inner = new StateGraph(State)
    .addNode("n", async () => ({ log: [`[${(await leaf.invoke({ messages: [] })).log.join(",")}]`] }))
    .addEdge(START, "n")
    .addEdge("n", END)
    .compile(options(shape.at(-2)!));
  for (const c of shape.slice(0, -2).split("").reverse()) {
    const below = inner;
    inner = new StateGraph(State)
      .addNode("n", async () => ({ log: [(await below.invoke({ messages: [] })).log.at(-1)!] }))
      .addEdge(START, "n")
      .addEdge("n", END)
      .compile(options(c));
  }
  const top = inner;
  return new StateGraph(State)
    .addNode("root", async () => ({ messages: [new AIMessage((await top.invoke({ messages: [] })).log.at(-1)!)] }))
    .addEdge(START, "root")
    .addEdge("root", END)
    .compile({ checkpointer: saver });
}

describe.each(["sync", "async", "exit"] as const)("a plain subgraph in a checkpointer: true one (durability %s)", (durability) => {
  it.each([
    ["MPM", "user"],
    ["MPM", "LangGraph"],
    ["PMPM", "user"],
    ["PMPM", "LangGraph"],
  ] as const)("%s: its leaf waits again after a rollback to the %s checkpoint at its wait", async (shape, which) => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = shapedGraph(saver, shape);
    const config = { configurable: { thread_id: "t" }, durability };
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
    // The new answer is the one used, not the undone one: the plain subgraph resumed where the leaf waited.
    expect(await answer("z1")).toBe("[z1]");
    expect(sent).toEqual(["z1"]);
    await graph.invoke({ messages: [new HumanMessage("more")] }, config);
    expect(await answer("w")).toBe("[z1,w]");
    expect(sent).toEqual(["z1", "w"]);
  });
});
