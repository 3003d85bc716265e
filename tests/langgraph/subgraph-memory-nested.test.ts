// A `checkpointer: true` subgraph inside another finishes on resume as with MemorySaver: its answers are not dropped.
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { Annotation, Command, END, MemorySaver, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import type { BaseCheckpointSaver } from "@langchain/langgraph-checkpoint";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { sendTool } from "./helpers.js";

const dbs = tempDatabases();

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/** The root runs memory subgraph "mid", which runs memory subgraph "leaf", which asks "Q?" and logs the answer. */
function nestedGraph(checkpointer: BaseCheckpointSaver) {
  const asked = { count: 0 };
  const leaf = new StateGraph(State)
    .addNode("ask", () => {
      asked.count++;
      return { log: [`ans ${interrupt("Q?") as string}`] };
    })
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile({ checkpointer: true });
  const mid = new StateGraph(State)
    .addNode("leaf", async () => ({ log: [`L[${(await leaf.invoke({ messages: [] })).log.join(",")}]`] }))
    .addEdge(START, "leaf")
    .addEdge("leaf", END)
    .compile({ checkpointer: true });
  const graph = new StateGraph(State)
    .addNode("mid", async () => ({ messages: [new AIMessage(`mid:${(await mid.invoke({ messages: [] })).log.join(",")}`)] }))
    .addEdge(START, "mid")
    .addEdge("mid", END)
    .compile({ checkpointer });
  return { graph, asked };
}

/** Two turns, each answered once: the contents of the messages and what is asked after each step, and the asks run. */
async function twoTurns(checkpointer: BaseCheckpointSaver) {
  const { graph, asked } = nestedGraph(checkpointer);
  const config = { configurable: { thread_id: "t" } };
  const questions = async () => (await graph.getState(config)).tasks.flatMap((t) => t.interrupts.map((i) => String(i.value))).join(",");
  const seen: string[] = [];
  for (const [input, answer] of [
    ["go", "y1"],
    ["more", "y2"],
  ] as const) {
    await graph.invoke({ messages: [new HumanMessage(input)] }, config);
    seen.push(`asked ${await questions()}`);
    const out = await graph.invoke(new Command({ resume: answer }), config);
    seen.push(`${String(out.messages.at(-1)!.content)}; asked ${await questions()}`);
  }
  return { seen, asks: asked.count };
}

describe("a checkpointer: true subgraph inside another", () => {
  it("finishes on resume with its answer, as with MemorySaver, turn after turn", async () => {
    const expected = await twoTurns(new MemorySaver());
    expect(expected.seen).toEqual(["asked Q?", "mid:L[ans y1]; asked ", "asked Q?", "mid:L[ans y1],L[ans y1,ans y2]; asked "]);
    const { fp } = dbs.open();
    expect(await twoTurns(new ForkpointSaver(fp, { userId: "alice" }))).toEqual(expected);
  });

  it("forgets a turn a rollback of the root undid, and a switch back brings it again", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const { graph } = nestedGraph(saver);
    const config = { configurable: { thread_id: "t" } };
    const turn = async (input: string, answer: string) => {
      await graph.invoke({ messages: [new HumanMessage(input)] }, config);
      return String((await graph.invoke(new Command({ resume: answer }), config)).messages.at(-1)!.content);
    };
    expect(await turn("a", "y1")).toBe("mid:L[ans y1]");
    const s = await saver.sessionFor("t", { userId: "alice" });
    const cp = await s.checkpoint({ name: "after a" });
    expect(await turn("b", "y2")).toBe("mid:L[ans y1],L[ans y1,ans y2]");
    await s.rollback(cp.id);
    expect(await turn("c", "z")).toBe("mid:L[ans y1],L[ans y1,ans z]");
    await s.switchBranch((await s.branches()).find((b) => b.parentId === null)!.id);
    expect(await turn("d", "w")).toBe("mid:L[ans y1],L[ans y1,ans y2],L[ans y1,ans y2,ans w]");
  });
});

/**
 * As `nestedGraph`, but the root's node sends what "mid" returned through the thread's session: the leaf's checkpoint
 * holding the answer is put before any call moves the root's session on.
 */
function sendingNestedGraph(saver: ForkpointSaver) {
  const leaf = new StateGraph(State)
    .addNode("ask", () => ({ log: [`ans ${interrupt("Q?") as string}`] }))
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile({ checkpointer: true });
  const mid = new StateGraph(State)
    .addNode("leaf", async () => ({ log: [`L[${(await leaf.invoke({ messages: [] })).log.join(",")}]`] }))
    .addEdge(START, "leaf")
    .addEdge("leaf", END)
    .compile({ checkpointer: true });
  return new StateGraph(State)
    .addNode("mid", async () => {
      const text = `mid:${(await mid.invoke({ messages: [] })).log.join(",")}`;
      await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: text });
      return { messages: [new AIMessage(text)] };
    })
    .addEdge(START, "mid")
    .addEdge("mid", END)
    .compile({ checkpointer: saver });
}

describe.each(["sync", "async", "exit"] as const)("a checkpointer: true subgraph inside another (durability %s)", (durability) => {
  it.each(["user", "LangGraph"] as const)("waits again after a rollback to the %s checkpoint at its wait", async (which) => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = sendingNestedGraph(saver);
    const config = { configurable: { thread_id: "t" }, durability };
    const asked = async () => (await graph.getState(config)).tasks.flatMap((t) => t.interrupts.map((i) => String(i.value)));
    const answer = async (value: string) => String((await graph.invoke(new Command({ resume: value }), config)).messages.at(-1)!.content);
    await graph.invoke({ messages: [new HumanMessage("go")] }, config);
    expect(await asked()).toEqual(["Q?"]);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const waitingId = (await graph.getState(config)).config.configurable!.checkpoint_id as string;
    const mine = await s.checkpoint({ name: "waiting" });
    expect(await answer("y1")).toBe("mid:L[ans y1]");
    expect(sent).toEqual(["mid:L[ans y1]"]);
    const waiting = (await s.listCheckpoints({})).items.find(
      (c) => (c.metadata as { langgraph?: { checkpointId?: string } } | null)?.langgraph?.checkpointId === waitingId,
    )!;
    await s.rollback(which === "user" ? mine.id : waiting.id);
    expect(sent).toEqual([]);
    expect(await asked()).toEqual(["Q?"]);
    // The new answer is the one used, not the undone one: the leaf waited again at its question.
    expect(await answer("z")).toBe("mid:L[ans z]");
    expect(sent).toEqual(["mid:L[ans z]"]);
    await graph.invoke({ messages: [new HumanMessage("more")] }, config);
    expect(await answer("w")).toBe("mid:L[ans z],L[ans z,ans w]");
    expect(sent).toEqual(["mid:L[ans z]", "mid:L[ans z],L[ans z,ans w]"]);
  });
});
