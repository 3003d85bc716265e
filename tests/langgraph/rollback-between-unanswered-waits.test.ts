// Rollbacks between user checkpoints at one wait whose lineages answered nothing there by then: no empty branches.
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

const State = Annotation.Root({ a: Annotation<string>(), b: Annotation<string>() });

/** Thread "t": "qa" and "qb" ask side by side after "plan"; "act" records what it got once both are answered. */
async function setup() {
  const acted: string[] = [];
  const { fp } = dbs.open();
  const saver = new ForkpointSaver(fp, { userId: "alice" });
  const graph = new StateGraph(State)
    .addNode("plan", () => ({}))
    .addNode("qa", () => ({ a: interrupt("A?") as string }))
    .addNode("qb", () => ({ b: interrupt("B?") as string }))
    .addNode("act", (st) => {
      acted.push(`${st.a}/${st.b}`);
      return {};
    })
    .addEdge(START, "plan")
    .addEdge("plan", "qa")
    .addEdge("plan", "qb")
    .addEdge("qa", "act")
    .addEdge("qb", "act")
    .addEdge("act", END)
    .compile({ checkpointer: saver });
  const config = { configurable: { thread_id: "t" } };
  /** Answers the waiting questions named in `answers` (question -> answer), by interrupt id. */
  const answer = async (answers: Record<string, string>) => {
    const resume: Record<string, string> = {};
    for (const t of (await graph.getState(config)).tasks)
      for (const i of t.interrupts) if (String(i.value) in answers) resume[i.id!] = answers[String(i.value)]!;
    await graph.invoke(new Command({ resume }), config);
  };
  await graph.invoke({}, config);
  const s = await saver.sessionFor("t", { userId: "alice" });
  return { s, graph, config, answer, acted };
}

describe("rollbacks between checkpoints at a wait, each taken before its lineage answered anything there", () => {
  it("stay on the branch: each lineage serves no answer there, so none tells them apart", async () => {
    const { s, graph, config, answer, acted } = await setup();
    const c0 = await s.checkpoint({ name: "c0" });
    await answer({ "A?": "A1" });
    await s.rollback(c0.id);
    const k = await s.checkpoint({ name: "k" });
    await answer({ "B?": "B2" });
    await s.rollback(c0.id);
    expect(await s.branches()).toHaveLength(3);
    await s.rollback(k.id);
    await s.rollback(c0.id);
    expect(await s.branches()).toHaveLength(3);
    const state = await graph.getState(config);
    expect([...state.next].sort()).toEqual(["qa", "qb"]);
    await answer({ "A?": "A3" });
    await answer({ "B?": "B3" });
    expect(acted).toEqual(["A3/B3"]);
  });

  it("a rollback to the checkpoint of a lineage that answered before it still forks and serves that answer", async () => {
    const { s, graph, config, answer, acted } = await setup();
    const c0 = await s.checkpoint({ name: "c0" });
    await answer({ "A?": "A1" });
    const k = await s.checkpoint({ name: "k" });
    await s.rollback(c0.id);
    expect(await s.branches()).toHaveLength(2);
    await s.rollback(k.id);
    expect(await s.branches()).toHaveLength(3);
    expect((await graph.getState(config)).values.a).toBe("A1");
    await answer({ "B?": "B3" });
    expect(acted).toEqual(["A1/B3"]);
  });

  it("a task that asked twice, answered once before the checkpoint and once after: a rollback there still forks", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = new StateGraph(State)
      .addNode("both", () => ({ a: `${interrupt("q1") as string},${interrupt("q2") as string}` }))
      .addEdge(START, "both")
      .addEdge("both", END)
      .compile({ checkpointer: saver });
    const config = { configurable: { thread_id: "t" } };
    const answer = async (value: string) => {
      const [i] = (await graph.getState(config)).tasks.flatMap((t) => t.interrupts);
      await graph.invoke(new Command({ resume: { [i!.id!]: value } }), config);
    };
    const asked = async () => (await graph.getState(config)).tasks.flatMap((t) => t.interrupts).map((i) => i.value);
    await graph.invoke({}, config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const c0 = await s.checkpoint({ name: "c0" });
    await answer("x");
    const k = await s.checkpoint({ name: "k" });
    await answer("y");
    await s.rollback(c0.id);
    expect(await s.branches()).toHaveLength(2);
    expect(await asked()).toEqual(["q1"]);
    await s.rollback(k.id);
    expect(await s.branches()).toHaveLength(3);
  });
});
