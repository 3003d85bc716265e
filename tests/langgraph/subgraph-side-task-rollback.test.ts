// A subgraph's task that finished beside its wait, its call undone by a rollback to the parent's step, runs again.
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { Log, sendTool } from "./helpers.js";

const dbs = tempDatabases();

/** A subgraph whose "ask" waits for an answer beside "side", which sends once; the parent runs it as its one node. */
async function setup() {
  const sent: string[] = [];
  const { fp } = dbs.open({ tools: [sendTool(sent)] });
  const saver = new ForkpointSaver(fp, { userId: "alice" });
  const send = async (t: string) => (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t });
  const runs = { side: 0 };
  const inner = new StateGraph(Log)
    .addNode("ask", async () => {
      const answer = interrupt("q") as string;
      await send(`q=${answer}`);
      return { log: [`q=${answer}`] };
    })
    .addNode("side", async () => {
      runs.side++;
      await send(`side ${runs.side}`);
      return { log: [`side ${runs.side}`] };
    })
    .addEdge(START, "ask")
    .addEdge(START, "side")
    .addEdge("ask", END)
    .addEdge("side", END)
    .compile();
  const graph = new StateGraph(Annotation.Root({ log: Annotation<string[]>({ reducer: (_, b) => b, default: () => [] }) }))
    .addNode("sub", inner)
    .addEdge(START, "sub")
    .addEdge("sub", END)
    .compile({ checkpointer: saver });
  const config = { configurable: { thread_id: "t" }, durability: "sync" as const };
  await graph.invoke({ log: [] }, config);
  const s = await saver.sessionFor("t", { userId: "alice" });
  return { sent, s, graph, config, runs };
}

describe("a rollback to the parent's checkpoint of a step a subgraph waited in", () => {
  it("runs the subgraph's task that finished beside the wait again, and shows its new result", async () => {
    const { sent, s, graph, config, runs } = await setup();
    expect(sent).toEqual(["side 1"]);
    const stepId = (await graph.getState(config)).config.configurable!.checkpoint_id as string;
    const step = (await s.listCheckpoints({})).items.find(
      (c) => (c.metadata as { langgraph?: { checkpointId?: string } } | null)?.langgraph?.checkpointId === stepId,
    )!;
    await s.rollback(step.id);
    expect(sent).toEqual([]);
    const out = await graph.invoke(new Command({ resume: "x" }), config);
    expect(runs.side).toBe(2);
    expect([...sent].sort()).toEqual(["q=x", "side 2"]);
    expect([...out.log].sort()).toEqual(["q=x", "side 2"]);
  });
});
