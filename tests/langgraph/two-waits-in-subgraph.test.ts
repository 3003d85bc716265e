// A subgraph's task that waits twice in one step of its parent (its parent writes no checkpoint in between): a rollback
// takes the subgraph back to the wait the rollback lands at, not to its newest, and the world matches what it shows.
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { sendTool } from "./helpers.js";

const dbs = tempDatabases();

const State = Annotation.Root({ a: Annotation<string>(), b: Annotation<string>(), done: Annotation<string>() });

/**
 * Thread "t": the subgraph "sub" asks "first?" in "ask1", sends "a=<answer>", then asks "second?" in "ask2" and sends
 * "b=<answer>"; the parent's "fin" goes on after it. Set up: first wait, checkpoint `first`, resume "A", second wait,
 * checkpoint `second`, resume "C": finished, with "a=A" and "b=C" sent.
 */
async function setup(durability: "sync" | "async") {
  const sent: string[] = [];
  const { fp } = dbs.open({ tools: [sendTool(sent)] });
  const saver = new ForkpointSaver(fp, { userId: "alice" });
  const send = async (t: string) => (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t });
  const sub = new StateGraph(State)
    .addNode("ask1", async () => {
      const a = interrupt("first?") as string;
      await send(`a=${a}`);
      return { a };
    })
    .addNode("ask2", async () => {
      const b = interrupt("second?") as string;
      await send(`b=${b}`);
      return { b };
    })
    .addEdge(START, "ask1")
    .addEdge("ask1", "ask2")
    .addEdge("ask2", END)
    .compile();
  const graph = new StateGraph(State)
    .addNode("sub", sub)
    .addNode("fin", (s) => ({ done: `done ${s.a} ${s.b}` }))
    .addEdge(START, "sub")
    .addEdge("sub", "fin")
    .addEdge("fin", END)
    .compile({ checkpointer: saver });
  const config = { configurable: { thread_id: "t" }, durability };
  await graph.invoke({ a: "-", b: "-", done: "" }, config);
  const s = await saver.sessionFor("t", { userId: "alice" });
  const stepId = (await graph.getState(config)).config.configurable!.checkpoint_id as string;
  const first = await s.checkpoint({ name: "first wait" });
  await graph.invoke(new Command({ resume: "A" }), config);
  const second = await s.checkpoint({ name: "second wait" });
  expect(await graph.invoke(new Command({ resume: "C" }), config)).toMatchObject({ done: "done A C" });
  expect(sent).toEqual(["a=A", "b=C"]);
  const { items } = await s.listCheckpoints({});
  const step = items.find((c) => (c.metadata as { langgraph?: { checkpointId?: string } } | null)?.langgraph?.checkpointId === stepId)!;
  return { sent, fp, saver, s, graph, config, first, second, step };
}

type Setup = Awaited<ReturnType<typeof setup>>;

/** The thread waits in the subgraph at `node`, with its question (its interrupt's id the subgraph's there). */
async function expectWaiting({ graph, config }: Setup, question: string, node: string) {
  const state = await graph.getState(config, { subgraphs: true });
  expect(state.next).toEqual(["sub"]);
  expect(state.tasks.flatMap((t) => t.interrupts).map((i) => i.value)).toEqual([question]);
  const sub = state.tasks[0]?.state as { next?: string[]; tasks?: { interrupts: { id?: string }[] }[] } | undefined;
  expect(sub?.next).toEqual([node]);
  expect(state.tasks[0]!.interrupts.map((i) => i.id)).toEqual(sub?.tasks?.flatMap((t) => t.interrupts).map((i) => i.id));
  // The history lists the head's checkpoint as the head shows it.
  const id = state.config.configurable?.checkpoint_id as string;
  let listed: typeof state | undefined;
  for await (const h of graph.getStateHistory(config)) if (h.config.configurable?.checkpoint_id === id) listed = h;
  expect(listed?.tasks.flatMap((t) => t.interrupts).map((i) => i.value)).toEqual([question]);
}

describe.each(["sync", "async"] as const)("two waits in one subgraph task, rolled back (durability %s)", (durability) => {
  it.each([false, true])("to the first wait (pruned: %s): waits at the first question, its call undone", async (pruned) => {
    const t = await setup(durability);
    await t.s.rollback(t.first.id);
    if (pruned) await t.saver.prune(["t"], { userId: "alice" });
    expect(t.sent).toEqual([]);
    await expectWaiting(t, "first?", "ask1");
    await t.graph.invoke(new Command({ resume: "B" }), t.config);
    expect(t.sent).toEqual(["a=B"]);
    await expectWaiting(t, "second?", "ask2");
    expect(await t.graph.invoke(new Command({ resume: "D" }), t.config)).toMatchObject({ a: "B", b: "D", done: "done B D" });
    expect(t.sent).toEqual(["a=B", "b=D"]);
    expect(await t.fp.verify()).toMatchObject({ ok: true });
  });

  it("to the second wait: waits at the second question, the first call kept", async () => {
    const t = await setup(durability);
    await t.s.rollback(t.second.id);
    expect(t.sent).toEqual(["a=A"]);
    await expectWaiting(t, "second?", "ask2");
    expect(await t.graph.invoke(new Command({ resume: "D" }), t.config)).toMatchObject({ a: "A", b: "D", done: "done A D" });
    expect(t.sent).toEqual(["a=A", "b=D"]);
  });

  it("to the parent's checkpoint of the step (before the subgraph ran): waits at the first question", async () => {
    const t = await setup(durability);
    await t.s.rollback(t.step.id);
    expect(t.sent).toEqual([]);
    await expectWaiting(t, "first?", "ask1");
    // Resumed by the interrupt's id, from the head's own config (read by its id): as from the thread.
    const state = await t.graph.getState(t.config);
    const id = state.tasks[0]!.interrupts[0]!.id!;
    const byId = await t.graph.getState(state.config);
    expect(byId.tasks.flatMap((x) => x.interrupts)).toEqual(state.tasks.flatMap((x) => x.interrupts));
    await t.graph.invoke(new Command({ resume: { [id]: "B" } }), { ...state.config, durability });
    expect(t.sent).toEqual(["a=B"]);
    await expectWaiting(t, "second?", "ask2");
  });

  it("undo and redo of the rollback to the first wait", async () => {
    const t = await setup(durability);
    await t.s.rollback(t.first.id);
    await t.s.undo();
    expect(t.sent).toEqual(["a=A", "b=C"]);
    const state = await t.graph.getState(t.config);
    expect(state.next).toEqual([]);
    expect(state.values).toMatchObject({ a: "A", b: "C", done: "done A C" });
    await t.s.redo();
    expect(t.sent).toEqual([]);
    await expectWaiting(t, "first?", "ask1");
  });

  it("after going on from the first wait again, a rollback to a checkpoint at the second wait there and back to the first", async () => {
    const t = await setup(durability);
    await t.s.rollback(t.first.id);
    await t.graph.invoke(new Command({ resume: "B" }), t.config);
    const again = await t.s.checkpoint({ name: "second wait again" });
    await t.graph.invoke(new Command({ resume: "D" }), t.config);
    expect(t.sent).toEqual(["a=B", "b=D"]);
    await t.s.rollback(again.id);
    expect(t.sent).toEqual(["a=B"]);
    await expectWaiting(t, "second?", "ask2");
    await t.s.rollback(t.first.id);
    expect(t.sent).toEqual([]);
    await expectWaiting(t, "first?", "ask1");
  });

  it("a checkpoint taken at the first wait after the rollback, rolled back to, waits at the first question", async () => {
    const t = await setup(durability);
    await t.s.rollback(t.first.id);
    const there = await t.s.checkpoint({ name: "first wait again" });
    await t.s.undo();
    expect(t.sent).toEqual(["a=A", "b=C"]);
    await t.s.rollback(there.id);
    expect(t.sent).toEqual([]);
    await expectWaiting(t, "first?", "ask1");
    await t.saver.prune(["t"], { userId: "alice" });
    await expectWaiting(t, "first?", "ask1");
  });
});

describe.each(["sync", "async"] as const)("two waits in a subgraph inside a subgraph (durability %s)", (durability) => {
  it.each([false, true])("rolled back to the first wait (pruned: %s): every level waits at the first question", async (pruned) => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const send = async (t: string) => (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t });
    const inner = new StateGraph(State)
      .addNode("ask1", async () => {
        const a = interrupt("first?") as string;
        await send(`a=${a}`);
        return { a };
      })
      .addNode("ask2", async () => {
        const b = interrupt("second?") as string;
        await send(`b=${b}`);
        return { b };
      })
      .addEdge(START, "ask1")
      .addEdge("ask1", "ask2")
      .addEdge("ask2", END)
      .compile();
    const middle = new StateGraph(State).addNode("inner", inner).addEdge(START, "inner").addEdge("inner", END).compile();
    const graph = new StateGraph(State)
      .addNode("middle", middle)
      .addEdge(START, "middle")
      .addEdge("middle", END)
      .compile({ checkpointer: saver });
    const config = { configurable: { thread_id: "t" }, durability };
    /** The questions each level shows, and where the inner subgraph waits. */
    const waiting = async () => {
      const state = await graph.getState(config, { subgraphs: true });
      const mid = state.tasks[0]?.state as { tasks: { interrupts: { value?: unknown }[]; state?: { next?: string[] } }[] };
      return {
        top: state.tasks.flatMap((t) => t.interrupts).map((i) => i.value),
        middle: mid.tasks.flatMap((t) => t.interrupts).map((i) => i.value),
        inner: mid.tasks[0]?.state?.next,
      };
    };
    await graph.invoke({ a: "-", b: "-" }, config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const first = await s.checkpoint({ name: "first wait" });
    await graph.invoke(new Command({ resume: "A" }), config);
    expect(await waiting()).toEqual({ top: ["second?"], middle: ["second?"], inner: ["ask2"] });
    await s.rollback(first.id);
    if (pruned) await saver.prune(["t"], { userId: "alice" });
    expect(sent).toEqual([]);
    expect(await waiting()).toEqual({ top: ["first?"], middle: ["first?"], inner: ["ask1"] });
    await graph.invoke(new Command({ resume: "B" }), config);
    expect(sent).toEqual(["a=B"]);
    expect(await waiting()).toEqual({ top: ["second?"], middle: ["second?"], inner: ["ask2"] });
    expect(await graph.invoke(new Command({ resume: "C" }), config)).toMatchObject({ a: "B", b: "C" });
    expect(sent).toEqual(["a=B", "b=C"]);
    await s.undo();
    expect(sent).toEqual(["a=A"]);
    expect(await waiting()).toEqual({ top: ["second?"], middle: ["second?"], inner: ["ask2"] });
  });
});
