// A rollback to a user's checkpoint taken at a wait on another branch than the current one, at the same point (answers
// with no call between): it forks and serves that checkpoint's lineage's answers, not the current branch's.
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { sendTool } from "./helpers.js";

const dbs = tempDatabases();

const State = Annotation.Root({ a: Annotation<string>(), b: Annotation<string>() });

/** Thread "t": "qa" asks "A?" and "qb" asks "B?", side by side after "plan"; then "act" sends "<a>/<b>". */
function twoWaitsGraph(saver: ForkpointSaver) {
  return new StateGraph(State)
    .addNode("plan", () => ({}))
    .addNode("qa", () => ({ a: interrupt("A?") as string }))
    .addNode("qb", () => ({ b: interrupt("B?") as string }))
    .addNode("act", async (st) => {
      await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: `${st.a}/${st.b}` });
      return {};
    })
    .addEdge(START, "plan")
    .addEdge("plan", "qa")
    .addEdge("plan", "qb")
    .addEdge("qa", "act")
    .addEdge("qb", "act")
    .addEdge("act", END)
    .compile({ checkpointer: saver });
}

/** Thread "t": node "both" asks "q1", then "q2", then sends "<a1>,<a2>". */
function askTwiceGraph(saver: ForkpointSaver) {
  const State1 = Annotation.Root({ log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });
  return new StateGraph(State1)
    .addNode("both", async () => {
      const a = interrupt("q1") as string;
      const b = interrupt("q2") as string;
      await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: `${a},${b}` });
      return { log: [`${a},${b}`] };
    })
    .addEdge(START, "both")
    .addEdge("both", END)
    .compile({ checkpointer: saver });
}

type Asking = { tasks: { interrupts: { id?: string; value?: unknown }[] }[] };
const asked = (state: Asking) => state.tasks.flatMap((t) => t.interrupts).map((i) => i.value);

describe.each(["sync", "async"] as const)("a rollback to a wait on another branch (durability %s)", (durability) => {
  const config = { configurable: { thread_id: "t" }, durability };

  async function setup() {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = twoWaitsGraph(saver);
    await graph.invoke({}, config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    /** Answers the waits asking `answers`' questions. */
    const answer = async (answers: Record<string, string>) => {
      const resume: Record<string, string> = {};
      for (const t of (await graph.getState(config)).tasks)
        for (const i of t.interrupts) if (String(i.value) in answers) resume[i.id!] = answers[String(i.value)]!;
      await graph.invoke(new Command({ resume }), config);
    };
    const branches = async () => (await s.branches()).length;
    return { fp, sent, s, graph, answer, branches };
  }

  it("reached through a rollback to the other branch's checkpoint there, forks and serves its answer", async () => {
    const { fp, sent, s, graph, answer, branches } = await setup();
    const c0 = await s.checkpoint({ name: "C0" });
    await answer({ "A?": "A1" });
    const c1 = await s.checkpoint({ name: "C1" });
    await s.rollback(c0.id);
    await answer({ "A?": "A2" });
    const c2 = await s.checkpoint({ name: "C2" });
    await s.rollback(c1.id);
    expect((await graph.getState(config)).values.a).toBe("A1");
    const atC1 = (await s.info()).currentBranchId;
    await s.rollback(c2.id);
    expect(await branches()).toBe(4);
    expect((await s.info()).currentBranchId).not.toBe(atC1);
    const state = await graph.getState(config);
    expect(state.values.a).toBe("A2");
    expect(state.next).toEqual(["qb"]);
    // Clicked twice: no empty fork.
    await s.rollback(c2.id);
    expect(await branches()).toBe(4);
    await answer({ "B?": "B7" });
    expect(sent).toEqual(["A2/B7"]);
    expect(await fp.verify()).toMatchObject({ ok: true });
  });

  it("from a rollback's branch that read the wait before the answer, forks to the answer", async () => {
    const { sent, s, graph, answer, branches } = await setup();
    const c0 = await s.checkpoint({ name: "C0" });
    await answer({ "A?": "A1" });
    const c1 = await s.checkpoint({ name: "C1" });
    await s.rollback(c0.id);
    expect((await graph.getState(config)).next).toEqual(["qa", "qb"]);
    await s.rollback(c1.id);
    expect(await branches()).toBe(3);
    const state = await graph.getState(config);
    expect(state.values.a).toBe("A1");
    expect(state.next).toEqual(["qb"]);
    await answer({ "B?": "B3" });
    expect(sent).toEqual(["A1/B3"]);
  });

  it("from a branch whose parent went on past the wait, reads the target's lineage there", async () => {
    const { sent, s, graph, answer, branches } = await setup();
    const w = await s.checkpoint({ name: "W" });
    await answer({ "A?": "A1" });
    await answer({ "B?": "B1" });
    await s.rollback(w.id);
    const w2 = await s.checkpoint({ name: "W2" });
    await answer({ "A?": "A2" });
    const w3 = await s.checkpoint({ name: "W3" });
    await answer({ "B?": "B2" });
    await s.rollback(w2.id);
    await answer({ "B?": "B4" });
    expect(await branches()).toBe(3);
    await s.rollback(w3.id);
    expect(await branches()).toBe(4);
    const state = await graph.getState(config);
    expect(state.values).toMatchObject({ a: "A2" });
    expect(state.values.b).toBeUndefined();
    expect(state.next).toEqual(["qb"]);
    await answer({ "B?": "B5" });
    expect(sent).toEqual(["A2/B5"]);
  });

  it("a node asking twice: a rollback to its second question from a rollback to its first asks the second", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = askTwiceGraph(saver);
    await graph.invoke({ log: ["start"] }, config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const atQ1 = await s.checkpoint({ name: "waiting on q1" });
    await graph.invoke(new Command({ resume: "a" }), config);
    const atQ2 = await s.checkpoint({ name: "waiting on q2" });
    await s.rollback(atQ1.id);
    expect(asked(await graph.getState(config))).toEqual(["q1"]);
    await s.rollback(atQ2.id);
    expect((await s.branches()).length).toBe(3);
    expect(asked(await graph.getState(config))).toEqual(["q2"]);
    const out = await graph.invoke(new Command({ resume: "y" }), config);
    expect(out.log).toEqual(["start", "a,y"]);
    expect(sent).toEqual(["a,y"]);
  });
});
