// An answer whose mark names a checkpoint gone since: its kept seq still places it before or after a rollback's target.
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

const State = Annotation.Root({ a: Annotation<string>(), b: Annotation<string>() });

/** Thread "t" of alice in `fp`: "qa" and "qb" ask side by side after "plan"; "act" records what it got once both are answered. */
function twoQuestions(saver: ForkpointSaver, acted: string[]) {
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
  return { graph, config, answer };
}

/** A database with thread "t" waiting at both questions. */
async function setup() {
  const acted: string[] = [];
  const { fp } = dbs.open();
  const saver = new ForkpointSaver(fp, { userId: "alice" });
  const { graph, config, answer } = twoQuestions(saver, acted);
  await graph.invoke({}, config);
  const s = await saver.sessionFor("t", { userId: "alice" });
  return { fp, s, graph, config, answer, acted };
}

describe("an answer whose mark's checkpoint is gone since", () => {
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
    expect(state.tasks.flatMap((t) => t.interrupts.map((i) => i.value)).sort()).toEqual(["A?", "B?"]);
    await answer({ "B?": "B1" });
    await answer({ "A?": "A2" });
    expect(acted).toEqual(["A2/B1"]);
  });

  it("pruned by keepLast: 1, a rollback to a checkpoint taken after the answer keeps it, on one branch", async () => {
    const { fp, s, graph, config, answer, acted } = await setup();
    const pre = await s.checkpoint({ name: "pre" });
    await answer({ "A?": "A1" });
    const after = await s.checkpoint({ name: "after" });
    await s.setRetention({ keepLast: 1 });
    await fp.prune();
    expect((await s.listCheckpoints()).items.map((c) => c.id)).not.toContain(pre.id);
    await s.rollback(after.id);
    expect(await s.branches()).toHaveLength(1);
    const state = await graph.getState(config);
    expect(state.values.a).toBe("A1");
    expect([...state.next]).toEqual(["qb"]);
    await answer({ "B?": "B1" });
    expect(acted).toEqual(["A1/B1"]);
  });

  it("imported, then deleted: a rollback to a checkpoint taken before the answer forks; one after it keeps the answer", async () => {
    const { fp, s, answer } = await setup();
    const before = await s.checkpoint({ name: "before" });
    const newest = await s.checkpoint({ name: "newest" });
    await answer({ "A?": "A1" });
    const after = await s.checkpoint({ name: "after" });
    const doc = await fp.exportSession(s.id, { userId: "alice" });

    for (const target of ["before", "after"] as const) {
      const acted: string[] = [];
      const { fp: b } = dbs.open();
      await b.importSession(doc, { userId: "alice" });
      const saver = new ForkpointSaver(b, { userId: "alice" });
      const copy = twoQuestions(saver, acted);
      const t = await saver.sessionFor("t", { userId: "alice" });
      expect(JSON.stringify(await b.exportSession(t.id, { userId: "alice" }))).toBe(JSON.stringify(doc));
      await t.deleteCheckpoint(newest.id);
      await t.rollback(target === "before" ? before.id : after.id);
      const state = await copy.graph.getState(copy.config);
      if (target === "before") {
        expect(state.values.a).toBeUndefined();
        expect([...state.next].sort()).toEqual(["qa", "qb"]);
      } else {
        expect(await t.branches()).toHaveLength(1);
        expect(state.values.a).toBe("A1");
        await copy.answer({ "B?": "B1" });
        expect(acted).toEqual(["A1/B1"]);
      }
    }
  });
});
