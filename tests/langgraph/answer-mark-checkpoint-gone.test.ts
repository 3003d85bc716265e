// An answer whose mark names a checkpoint deleted since: a rollback to a user checkpoint taken before it forks.
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
  return { fp, s, graph, config, answer, acted };
}

describe("an answer stored after a user checkpoint that is gone since", () => {
  it.each([
    ["deleted", false],
    ["expired and pruned", true],
  ])("%s: a rollback to a checkpoint taken before the answer forks, and asks both again", async (_, expire) => {
    const { fp, s, graph, config, answer, acted } = await setup();
    const before = await s.checkpoint({ name: "before" });
    const newest = await s.checkpoint({ name: "newest" });
    await answer({ "A?": "A1" });
    if (expire) {
      await s.expire(newest.id);
      await fp.prune();
    } else await s.deleteCheckpoint(newest.id);
    await s.rollback(before.id);
    expect(await s.branches()).toHaveLength(2);
    const state = await graph.getState(config);
    expect(state.values.a).toBeUndefined();
    expect([...state.next].sort()).toEqual(["qa", "qb"]);
    await answer({ "B?": "B1" });
    await answer({ "A?": "A2" });
    expect(acted).toEqual(["A2/B1"]);
  });
});
