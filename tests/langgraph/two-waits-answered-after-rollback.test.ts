// Two tasks waiting side by side, answered by interrupt id after a rollback to the wait: the new answers count.
import { Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { Log, sendTool } from "./helpers.js";

const dbs = tempDatabases();

/** Thread "t": "A" asks "qa" and "B" asks "qb" side by side; each sends "<question>=<answer>" once answered. */
async function setup() {
  const sent: string[] = [];
  const { fp } = dbs.open({ tools: [sendTool(sent)] });
  const saver = new ForkpointSaver(fp, { userId: "alice" });
  const ask = (q: string) => async () => {
    const answer = interrupt(q) as string;
    await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: `${q}=${answer}` });
    return { log: [`${q}=${answer}`] };
  };
  const graph = new StateGraph(Log)
    .addNode("A", ask("qa"))
    .addNode("B", ask("qb"))
    .addEdge(START, "A")
    .addEdge(START, "B")
    .addEdge("A", END)
    .addEdge("B", END)
    .compile({ checkpointer: saver });
  const config = { configurable: { thread_id: "t" }, durability: "sync" as const };
  /** The waiting questions' interrupt ids, by question. */
  const waits = async () =>
    Object.fromEntries((await graph.getState(config)).tasks.flatMap((t) => t.interrupts).map((i) => [i.value as string, i.id as string]));
  await graph.invoke({ log: ["start"] }, config);
  const s = await saver.sessionFor("t", { userId: "alice" });
  const waiting = await s.checkpoint({ name: "waiting" });
  return { sent, s, graph, config, waits, waiting };
}

describe("two tasks waiting side by side, rolled back to the wait and answered one at a time", () => {
  it.each([
    ["one of them answered", false],
    ["both answered", true],
  ])("before the rollback %s: the run ends with the new answers only", async (_, both) => {
    const { sent, s, graph, config, waits, waiting } = await setup();
    let ids = await waits();
    await graph.invoke(new Command({ resume: both ? { [ids.qa!]: "a", [ids.qb!]: "b" } : { [ids.qa!]: "a" } }), config);
    await s.rollback(waiting.id);
    expect(sent).toEqual([]);
    ids = await waits();
    await graph.invoke(new Command({ resume: { [ids.qa!]: "a2" } }), config);
    ids = await waits();
    const out = await graph.invoke(new Command({ resume: { [ids.qb!]: "b2" } }), config);
    expect([...out.log].sort()).toEqual(["qa=a2", "qb=b2", "start"]);
    expect([...sent].sort()).toEqual(["qa=a2", "qb=b2"]);
    expect((await graph.getState(config)).next).toEqual([]);
  });

  it("switched back to the first branch after the new answer: that branch's answer is served there", async () => {
    const { sent, s, graph, config, waits, waiting } = await setup();
    const first = (await s.info()).currentBranchId;
    let ids = await waits();
    await graph.invoke(new Command({ resume: { [ids.qa!]: "a" } }), config);
    await s.rollback(waiting.id);
    ids = await waits();
    await graph.invoke(new Command({ resume: { [ids.qa!]: "a2" } }), config);
    await s.switchBranch(first);
    expect(sent).toEqual(["qa=a"]);
    ids = await waits();
    const out = await graph.invoke(new Command({ resume: { [ids.qb!]: "b" } }), config);
    expect([...out.log].sort()).toEqual(["qa=a", "qb=b", "start"]);
    expect([...sent].sort()).toEqual(["qa=a", "qb=b"]);
  });

  it("rolled back again after the new answer: neither answer's result is served", async () => {
    const { sent, s, graph, config, waits, waiting } = await setup();
    let ids = await waits();
    await graph.invoke(new Command({ resume: { [ids.qa!]: "a" } }), config);
    await s.rollback(waiting.id);
    ids = await waits();
    await graph.invoke(new Command({ resume: { [ids.qa!]: "a2" } }), config);
    await s.rollback(waiting.id);
    expect(sent).toEqual([]);
    ids = await waits();
    const out = await graph.invoke(new Command({ resume: { [ids.qa!]: "a3", [ids.qb!]: "b3" } }), config);
    expect([...out.log].sort()).toEqual(["qa=a3", "qb=b3", "start"]);
    expect([...sent].sort()).toEqual(["qa=a3", "qb=b3"]);
  });
});
