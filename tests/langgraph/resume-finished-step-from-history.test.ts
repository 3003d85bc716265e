// A resume from an older step checkpoint picked from getStateHistory, after both waits of that step were answered and
// the graph ended, runs as a fork there (as MemorySaver runs it), keeping each call's effect once.
import { Command, END, MemorySaver, START, StateGraph, interrupt, type BaseCheckpointSaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { Log, sendTool } from "./helpers.js";

const dbs = tempDatabases();

/** "A" asks "qa" and "B" asks "qb" side by side, each then sending "<q>=<answer>" (`send`); then "C". */
function twoWaitsGraph(saver: BaseCheckpointSaver, send: (t: string) => Promise<void>) {
  const ask = (q: string) => async () => {
    const answer = interrupt(q) as string;
    await send(`${q}=${answer}`);
    return { log: [`${q}=${answer}`] };
  };
  return new StateGraph(Log)
    .addNode("A", ask("qa"))
    .addNode("B", ask("qb"))
    .addNode("C", () => ({ log: ["C"] }))
    .addEdge(START, "A")
    .addEdge(START, "B")
    .addEdge("A", "C")
    .addEdge("B", "C")
    .addEdge("C", END)
    .compile({ checkpointer: saver });
}

type Graph = ReturnType<typeof twoWaitsGraph>;

const waitsAt = async (graph: Graph, config: object) =>
  Object.fromEntries((await graph.getState(config)).tasks.flatMap((t) => t.interrupts).map((i) => [i.value as string, i.id!]));

/** Both waits answered one at a time (the graph ends), then "qb" answered again from the step's config in the history. */
async function travel(graph: Graph, durability: "sync" | "async") {
  const config = { configurable: { thread_id: "t" }, durability };
  await graph.invoke({ log: ["start"] }, config);
  await graph.invoke(new Command({ resume: { [(await waitsAt(graph, config)).qa!]: "a" } }), config);
  await graph.invoke(new Command({ resume: { [(await waitsAt(graph, config)).qb!]: "b" } }), config);
  let step: { config: object } | undefined;
  for await (const h of graph.getStateHistory(config)) if (h.next.includes("A") && h.next.includes("B")) step = h;
  const ids = await waitsAt(graph, step!.config);
  const out = await graph.invoke(new Command({ resume: { [ids.qb!]: "b9" } }), { ...step!.config, durability });
  return { out: [...out.log].sort(), now: [...(await graph.getState(config)).values.log].sort() };
}

describe.each(["sync", "async"] as const)("a resume from a finished step's checkpoint in the history (durability %s)", (durability) => {
  it("runs as MemorySaver runs it, each call's effect applied once", async () => {
    const memSent: string[] = [];
    const expected = await travel(
      twoWaitsGraph(new MemorySaver(), async (t) => void memSent.push(t)),
      durability,
    );
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const send = async (t: string) => void (await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t }));
    const got = await travel(twoWaitsGraph(saver, send), durability);
    expect(got).toEqual(expected);
    // MemorySaver sends each again beside the first; forkpoint's fork undoes the old run's or keeps them, once each.
    expect([...sent].sort()).toEqual([...new Set(memSent)].sort());
    const s = await saver.sessionFor("t", { userId: "alice" });
    const applied = (await s.toolTrack()).filter((c) => c.applied).map((c) => (c.args as { t: string }).t);
    expect(applied.sort()).toEqual([...sent].sort());
    expect(await fp.verify()).toMatchObject({ ok: true });
  });
});
