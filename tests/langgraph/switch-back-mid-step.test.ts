// A switch back to a branch left mid-step (one wait answered, its call made) shows that branch's step, not another's.
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { sendTool } from "./helpers.js";

const dbs = tempDatabases();

const State = Annotation.Root({ a: Annotation<string>(), b: Annotation<string>(), done: Annotation<string>() });

/**
 * Thread "t": "qa" asks "A?" and sends "a=<answer>", beside "qb" asking "B?"; then "act" sends "act:<a>/<b>". In a
 * subgraph (`inSubgraph`): the root graph's one node "sub" runs them.
 */
function twoWaitsGraph(saver: ForkpointSaver, inSubgraph = false) {
  const send = async (t: string) => (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t });
  const inner = new StateGraph(State)
    .addNode("qa", async () => {
      const a = interrupt("A?") as string;
      await send(`a=${a}`);
      return { a };
    })
    .addNode("qb", () => ({ b: interrupt("B?") as string }))
    .addNode("act", async (s) => {
      await send(`act:${s.a}/${s.b}`);
      return { done: `${s.a}/${s.b}` };
    })
    .addEdge(START, "qa")
    .addEdge(START, "qb")
    .addEdge(["qa", "qb"], "act")
    .addEdge("act", END);
  const root = () => inner.compile({ checkpointer: saver });
  const outer = () => new StateGraph(State).addNode("sub", inner.compile()).addEdge(START, "sub").addEdge("sub", END);
  // Driven as the root graph is (invoke, getState).
  const graph = inSubgraph ? (outer().compile({ checkpointer: saver }) as unknown as ReturnType<typeof root>) : root();
  const config = { configurable: { thread_id: "t" } };
  const answer = async (question: string, value: string) => {
    const asked = (await graph.getState(config)).tasks.flatMap((t) => t.interrupts).find((i) => i.value === question);
    return graph.invoke(new Command({ resume: { [asked!.id!]: value } }), config);
  };
  return { graph, config, answer };
}

describe("a branch left with one of two waits answered (its call made)", () => {
  it.each([false, true])("shows and resumes its own step after another branch finished it (answered between: %s)", async (between) => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const { graph, config, answer } = twoWaitsGraph(saver);
    await graph.invoke({ done: "" }, config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const x = (await s.info()).currentBranchId;
    const waiting = await s.checkpoint({ name: "both waiting" });
    await answer("A?", "A1");
    const answered = await s.checkpoint({ name: "A answered" });
    await s.rollback(waiting.id);
    if (between) await answer("A?", "A2");
    await s.rollback(answered.id);
    const z = (await s.info()).currentBranchId;
    expect(await answer("B?", "B3")).toMatchObject({ a: "A1", b: "B3", done: "A1/B3" });
    expect(sent).toEqual(["a=A1", "act:A1/B3"]);
    await s.switchBranch(x);
    // As the branch would stand had the other branches never been (as a MemorySaver shows it): "A1" given, "B?" open.
    const state = await graph.getState(config);
    expect(state.values).toMatchObject({ a: "A1" });
    expect(state.values.b).toBeUndefined();
    expect(state.next).toEqual(["qb"]);
    expect(state.tasks.flatMap((t) => t.interrupts).map((i) => i.value)).toEqual(["A?", "B?"]);
    expect(sent).toEqual(["a=A1"]);
    expect(await answer("B?", "B6")).toMatchObject({ a: "A1", b: "B6", done: "A1/B6" });
    expect(sent).toEqual(["a=A1", "act:A1/B6"]);
    await s.switchBranch(z);
    expect((await graph.getState(config)).values).toMatchObject({ a: "A1", b: "B3", done: "A1/B3" });
    expect(sent).toEqual(["a=A1", "act:A1/B3"]);
    expect(await fp.verify()).toMatchObject({ ok: true });
  });
});

describe("a subgraph left with one of two waits answered (its call made)", () => {
  it("resumes its own step after another branch finished it, the answered task not run again", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const { graph, config, answer } = twoWaitsGraph(saver, true);
    await graph.invoke({ done: "" }, config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const x = (await s.info()).currentBranchId;
    const waiting = await s.checkpoint({ name: "both waiting" });
    await answer("A?", "A1");
    const answered = await s.checkpoint({ name: "A answered" });
    await s.rollback(waiting.id);
    await s.rollback(answered.id);
    const z = (await s.info()).currentBranchId;
    expect(await answer("B?", "B3")).toMatchObject({ a: "A1", b: "B3", done: "A1/B3" });
    expect(sent).toEqual(["a=A1", "act:A1/B3"]);
    await s.switchBranch(x);
    expect(sent).toEqual(["a=A1"]);
    const sub = (await graph.getState(config, { subgraphs: true })).tasks[0]?.state as { next?: string[]; values?: { a?: string } };
    expect(sub.next).toEqual(["qb"]);
    expect(sub.values?.a).toBe("A1");
    // "qa" finished on this branch: only "qb" runs (a MemorySaver thread would not run "qa" again either).
    expect(await answer("B?", "B6")).toMatchObject({ a: "A1", b: "B6", done: "A1/B6" });
    expect(sent).toEqual(["a=A1", "act:A1/B6"]);
    await s.switchBranch(z);
    expect(sent).toEqual(["a=A1", "act:A1/B3"]);
    expect(await fp.verify()).toMatchObject({ ok: true });
  });
});
