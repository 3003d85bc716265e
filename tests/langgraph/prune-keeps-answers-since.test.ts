// keep_latest on a thread whose step waited and was answered again after a rollback: every branch goes on as before.
import { Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { Log, sendTool } from "./helpers.js";

const dbs = tempDatabases();
const config = { configurable: { thread_id: "t" }, durability: "sync" as const };

/** "A" asks qa and "B" asks qb side by side; "act" then sends both answers: a step after the wait's. */
async function twoWaits() {
  const sent: string[] = [];
  const { fp } = dbs.open({ tools: [sendTool(sent)] });
  const saver = new ForkpointSaver(fp, { userId: "alice" });
  const ask = (q: string) => () => ({ log: [`${q}=${interrupt(q) as string}`] });
  const graph = new StateGraph(Log)
    .addNode("A", ask("qa"))
    .addNode("B", ask("qb"))
    .addNode("act", async (st) => {
      const did = st.log.filter((l) => l.startsWith("q")).sort();
      await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: did.join(",") });
      return {};
    })
    .addEdge(START, "A")
    .addEdge(START, "B")
    .addEdge("A", "act")
    .addEdge("B", "act")
    .addEdge("act", END)
    .compile({ checkpointer: saver });
  const answer = async (q: string, a: string) => {
    const ids = Object.fromEntries((await graph.getState(config)).tasks.flatMap((t) => t.interrupts).map((i) => [i.value, i.id!]));
    await graph.invoke(new Command({ resume: { [ids[q]!]: a } }), config);
  };
  await graph.invoke({ log: ["start"] }, config);
  const s = await saver.sessionFor("t", { userId: "alice" });
  const waiting = await s.checkpoint({ name: "waiting" });
  return { sent, saver, graph, s, waiting, answer };
}

/** A node running a `checkpointer: true` subgraph that asks, then sends its answer. */
async function memorySubgraph() {
  const sent: string[] = [];
  const { fp } = dbs.open({ tools: [sendTool(sent)] });
  const saver = new ForkpointSaver(fp, { userId: "alice" });
  const sub = new StateGraph(Log)
    .addNode("ask", async () => {
      const a = interrupt("q") as string;
      await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: a });
      return { log: [`ans ${a}`] };
    })
    .addEdge(START, "ask")
    .addEdge("ask", END)
    .compile({ checkpointer: true });
  const graph = new StateGraph(Log)
    .addNode("sub", async () => ({ log: (await sub.invoke({ log: [] })).log }))
    .addEdge(START, "sub")
    .addEdge("sub", END)
    .compile({ checkpointer: saver });
  await graph.invoke({ log: ["go"] }, config);
  const s = await saver.sessionFor("t", { userId: "alice" });
  const waiting = await s.checkpoint({ name: "waiting" });
  return { sent, saver, graph, s, waiting };
}

describe("keep_latest after a rollback to a wait answered again", () => {
  it("keeps the answer given on the current branch since, and a rollback to the wait asks both again", async () => {
    const { sent, saver, graph, s, waiting, answer } = await twoWaits();
    await answer("qa", "a1");
    await answer("qb", "b1");
    expect(sent).toEqual(["qa=a1,qb=b1"]);
    await s.rollback(waiting.id);
    await answer("qa", "a2");
    await saver.prune(["t"]);
    const state = await graph.getState(config);
    expect(state.values.log).toEqual(["start", "qa=a2"]);
    expect(state.next).toEqual(["B"]);
    await answer("qb", "b2");
    expect(sent).toEqual(["qa=a2,qb=b2"]);
    // Back at the wait once more: neither answer is served, and the new ones are the ones that count.
    await s.rollback(waiting.id);
    expect((await graph.getState(config)).next).toEqual(["A", "B"]);
    await answer("qb", "b3");
    expect((await graph.getState(config)).values.log).toEqual(["start", "qb=b3"]);
    await answer("qa", "a3");
    expect(sent).toEqual(["qa=a3,qb=b3"]);
  });

  it("a branch left with one answer given, switched back to after the prune, goes on from that answer", async () => {
    const { sent, saver, graph, s, waiting, answer } = await twoWaits();
    await answer("qa", "a1");
    await answer("qb", "b1");
    const first = (await s.info()).currentBranchId;
    await s.rollback(waiting.id);
    await answer("qa", "a2");
    const left = (await s.info()).currentBranchId;
    await s.switchBranch(first);
    await s.rollback(waiting.id);
    await answer("qb", "b3");
    await saver.prune(["t"]);
    await s.switchBranch(left);
    expect((await graph.getState(config)).values.log).toEqual(["start", "qa=a2"]);
    await answer("qb", "b2");
    expect(sent).toEqual(["qa=a2,qb=b2"]);
  });

  it("a checkpointer: true subgraph answered on two branches: a rollback to its wait asks again, the tool runs", async () => {
    const { sent, saver, graph, s, waiting } = await memorySubgraph();
    await graph.invoke(new Command({ resume: "yes1" }), config);
    const first = (await s.info()).currentBranchId;
    await s.rollback(waiting.id);
    await graph.invoke(new Command({ resume: "yes3" }), config);
    await s.switchBranch(first);
    expect(sent).toEqual(["yes1"]);
    await saver.prune(["t"]);
    expect((await graph.getState(config)).values.log).toEqual(["go", "ans yes1"]);
    await s.rollback(waiting.id);
    expect(sent).toEqual([]);
    expect((await graph.getState(config)).next).toEqual(["sub"]);
    const out = await graph.invoke(new Command({ resume: "yes4" }), config);
    expect(out.log).toEqual(["go", "ans yes4"]);
    expect(sent).toEqual(["yes4"]);
  });
});
