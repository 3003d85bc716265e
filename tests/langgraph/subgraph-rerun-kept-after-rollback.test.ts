// A subgraph's tasks run again after a rollback to the parent's step keep their new results for the runs after.
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { Log, sendTool } from "./helpers.js";

const dbs = tempDatabases();

/** A subgraph asking "qa" and "qb" beside "side", which sends once; the parent runs it as its one node. */
async function setup(checkpointer: boolean) {
  const sent: string[] = [];
  const { fp } = dbs.open({ tools: [sendTool(sent)] });
  const saver = new ForkpointSaver(fp, { userId: "alice" });
  const send = async (t: string) => (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t });
  const runs: Record<string, number> = { side: 0, qa: 0, qb: 0 };
  const ask = (q: string) => async () => {
    runs[q]!++;
    const answer = interrupt(q) as string;
    await send(`${q}=${answer}`);
    return { log: [`${q}=${answer}`] };
  };
  const inner = new StateGraph(Log)
    .addNode("qa", ask("qa"))
    .addNode("qb", ask("qb"))
    .addNode("side", async () => {
      runs.side!++;
      await send(`side ${runs.side}`);
      return { log: [`side ${runs.side}`] };
    })
    .addEdge(START, "qa")
    .addEdge(START, "qb")
    .addEdge(START, "side")
    .addEdge("qa", END)
    .addEdge("qb", END)
    .addEdge("side", END)
    .compile(checkpointer ? { checkpointer: true } : {});
  const graph = new StateGraph(Annotation.Root({ log: Annotation<string[]>({ reducer: (_, b) => b, default: () => [] }) }))
    .addNode("sub", inner)
    .addEdge(START, "sub")
    .addEdge("sub", END)
    .compile({ checkpointer: saver });
  const config = { configurable: { thread_id: "t" }, durability: "sync" as const };
  await graph.invoke({ log: [] }, config);
  const s = await saver.sessionFor("t", { userId: "alice" });
  const stepId = (await graph.getState(config)).config.configurable!.checkpoint_id as string;
  const step = (await s.listCheckpoints({})).items.find(
    (c) => (c.metadata as { langgraph?: { checkpointId?: string } } | null)?.langgraph?.checkpointId === stepId,
  )!;
  await s.rollback(step.id);
  const waits = async () =>
    Object.fromEntries((await graph.getState(config)).tasks.flatMap((t) => t.interrupts).map((i) => [i.value as string, i.id as string]));
  return { sent, graph, config, runs, waits };
}

describe("a subgraph's tasks run again after a rollback to the parent's checkpoint of their step", () => {
  for (const checkpointer of [false, true]) {
    it(`are not run a third time by the next resume (checkpointer: ${checkpointer})`, async () => {
      const { sent, graph, config, runs, waits } = await setup(checkpointer);
      await graph.invoke(new Command({ resume: { [(await waits()).qa!]: "a" } }), config);
      expect([...sent].sort()).toEqual(["qa=a", "side 2"]);
      const out = await graph.invoke(new Command({ resume: { [(await waits()).qb!]: "b" } }), config);
      expect([...out.log].sort()).toEqual(["qa=a", "qb=b", "side 2"]);
      expect([...sent].sort()).toEqual(["qa=a", "qb=b", "side 2"]);
      expect(runs).toEqual({ side: 2, qa: 2, qb: 3 });
    });
  }

  it("keeps the side task's new result through a run without input", async () => {
    const { sent, graph, config, runs, waits } = await setup(false);
    await graph.invoke(null, config);
    expect(sent).toEqual(["side 2"]);
    const ids = await waits();
    const out = await graph.invoke(new Command({ resume: { [ids.qa!]: "a", [ids.qb!]: "b" } }), config);
    expect([...out.log].sort()).toEqual(["qa=a", "qb=b", "side 2"]);
    expect([...sent].sort()).toEqual(["qa=a", "qb=b", "side 2"]);
    expect(runs.side).toBe(2);
  });
});
