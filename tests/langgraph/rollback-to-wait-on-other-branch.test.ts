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
});
