// A rollback to a user's checkpoint taken after one of a step's two questions was answered keeps that task's result
// (and its call): only the other question is asked again, and the answered task does not run again.
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { sendTool } from "./helpers.js";

const dbs = tempDatabases();

const config = { configurable: { thread_id: "t" } };

const Answers = Annotation.Root({ a: Annotation<string>(), b: Annotation<string>(), done: Annotation<string>() });

/**
 * "qa" and "qb" ask side by side ("qa" sends its answer when `call`); "act" joins the answers. `inSubgraph`: all of it
 * is a subgraph, the one node of the graph the saver checkpoints.
 */
function twoQuestions(saver: ForkpointSaver, call: boolean, inSubgraph = false) {
  const runs = { qa: 0 };
  const sessionOf = () => saver.sessionFor("t", { userId: "alice" });
  const steps = new StateGraph(Answers)
    .addNode("plan", () => ({}))
    .addNode("qa", async () => {
      runs.qa++;
      const a = interrupt("A?") as string;
      if (call) await (await sessionOf()).invoke("send", { t: a });
      return { a };
    })
    .addNode("qb", () => ({ b: interrupt("B?") as string }))
    .addNode("act", (state) => ({ done: `${state.a}/${state.b}` }))
    .addEdge(START, "plan")
    .addEdge("plan", "qa")
    .addEdge("plan", "qb")
    .addEdge("qa", "act")
    .addEdge("qb", "act")
    .addEdge("act", END);
  // One type for both: the tests only invoke the graph and read its state.
  const graph = inSubgraph
    ? (new StateGraph(Answers)
        .addNode("sub", steps.compile())
        .addEdge(START, "sub")
        .addEdge("sub", END)
        .compile({ checkpointer: saver }) as unknown as ReturnType<typeof steps.compile>)
    : steps.compile({ checkpointer: saver });
  return { graph, runs, sessionOf };
}

type Graph = ReturnType<typeof twoQuestions>["graph"];

/** Answers the question `value` asks with `answer` (by its interrupt's id). */
async function answer(graph: Graph, question: string, value: string) {
  const state = await graph.getState(config, { subgraphs: true });
  const id = state.tasks.flatMap((t) => t.interrupts).find((i) => i.value === question)!.id!;
  return graph.invoke(new Command({ resume: { [id]: value } }), config);
}

describe("a rollback to a user's checkpoint taken after one of a step's two questions was answered", () => {
  for (const call of [true, false]) {
    it(`keeps the answered task's result${call ? " and its call" : ""}, asking only the other`, async () => {
      const sent: string[] = [];
      const { fp } = dbs.open({ tools: [sendTool(sent)] });
      const saver = new ForkpointSaver(fp, { userId: "alice" });
      const { graph, runs, sessionOf } = twoQuestions(saver, call);
      await graph.invoke({}, config);
      await answer(graph, "A?", "A1");
      const s = await sessionOf();
      const answered = await s.checkpoint({ name: "WA" });
      expect((await answer(graph, "B?", "B1")).done).toBe("A1/B1");
      await s.rollback(answered.id);
      const state = await graph.getState(config);
      expect(state.next).toEqual(["qb"]);
      expect(state.values.a).toBe("A1");
      expect(sent).toEqual(call ? ["A1"] : []);
      expect((await answer(graph, "B?", "B2")).done).toBe("A1/B2");
      expect(runs.qa).toBe(2);
      expect(sent).toEqual(call ? ["A1"] : []);
      expect((await s.toolTrack()).map((c) => (c.args as { t: string }).t)).toEqual(call ? ["A1"] : []);
    });
  }

  it("inside a subgraph: keeps the answered task's result and its call, asking only the other", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const { graph, runs, sessionOf } = twoQuestions(saver, true, true);
    await graph.invoke({}, config);
    await answer(graph, "A?", "A1");
    const s = await sessionOf();
    const answered = await s.checkpoint({ name: "WA" });
    expect((await answer(graph, "B?", "B1")).done).toBe("A1/B1");
    await s.rollback(answered.id);
    const inner = (await graph.getState(config, { subgraphs: true })).tasks[0]!.state as { next: string[]; values: { a?: string } };
    expect(inner.next).toEqual(["qb"]);
    expect(inner.values.a).toBe("A1");
    expect((await answer(graph, "B?", "B2")).done).toBe("A1/B2");
    expect(runs.qa).toBe(2);
    expect(sent).toEqual(["A1"]);
  });

  it("taken on a branch a rollback made: keeps that branch's answer, not the first branch's", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const { graph, sessionOf } = twoQuestions(saver, false);
    await graph.invoke({}, config);
    const s = await sessionOf();
    const waiting = await s.checkpoint({ name: "W" });
    await answer(graph, "A?", "A1");
    await answer(graph, "B?", "B1");
    await s.rollback(waiting.id);
    await answer(graph, "A?", "A2");
    const answered = await s.checkpoint({ name: "WA2" });
    expect((await answer(graph, "B?", "B2")).done).toBe("A2/B2");
    await s.rollback(answered.id);
    const state = await graph.getState(config);
    expect(state.next).toEqual(["qb"]);
    expect(state.values).toEqual({ a: "A2" });
    expect((await answer(graph, "B?", "B3")).done).toBe("A2/B3");
  });
});
