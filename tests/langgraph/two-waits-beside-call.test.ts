// A task asking twice beside a journaled call, rolled back to its first wait, asks its first question again.
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { sendTool } from "./helpers.js";

const dbs = tempDatabases();

const State = Annotation.Root({ a: Annotation<string>(), b: Annotation<string>(), c: Annotation<string>(), done: Annotation<string>() });

/**
 * Thread "t": the subgraph "sub" runs "ask1" (asks "first?", sends "a=<answer>") beside "side" (sends "side"), then
 * "ask2" (asks "second?", sends "b=<answer>"); the parent's "fin" goes on after it. Set up: first wait (with "side"
 * sent), checkpoint `first`, resume "A", second wait, checkpoint `second`.
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
    .addNode("side", async () => {
      await send("side");
      return { c: "yes" };
    })
    .addNode("ask2", async () => {
      const b = interrupt("second?") as string;
      await send(`b=${b}`);
      return { b };
    })
    .addEdge(START, "ask1")
    .addEdge(START, "side")
    .addEdge(["ask1", "side"], "ask2")
    .addEdge("ask2", END)
    .compile();
  const graph = new StateGraph(State)
    .addNode("sub", sub)
    .addNode("fin", (s) => ({ done: `done ${s.a} ${s.b} ${s.c}` }))
    .addEdge(START, "sub")
    .addEdge("sub", "fin")
    .addEdge("fin", END)
    .compile({ checkpointer: saver });
  const config = { configurable: { thread_id: "t" }, durability };
  await graph.invoke({ a: "-", b: "-", c: "-", done: "" }, config);
  expect(sent).toEqual(["side"]);
  const s = await saver.sessionFor("t", { userId: "alice" });
  const first = await s.checkpoint({ name: "first wait" });
  await graph.invoke(new Command({ resume: "A" }), config);
  expect(sent).toEqual(["side", "a=A"]);
  const second = await s.checkpoint({ name: "second wait" });
  return { sent, fp, saver, s, graph, config, first, second };
}

type Setup = Awaited<ReturnType<typeof setup>>;

/** The thread waits in the subgraph at `node` with `question` (its parent's task shows the subgraph's interrupt). */
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

describe.each(["sync", "async"] as const)("two waits in a subgraph beside a journaled call (durability %s)", (durability) => {
  it.each([
    { viaSecond: false, pruned: false },
    { viaSecond: true, pruned: false },
    { viaSecond: false, pruned: true },
  ])("rolled back to the first wait ($viaSecond, $pruned): asks the first question again, the call beside kept", async (o) => {
    const t = await setup(durability);
    if (o.viaSecond) {
      await t.s.rollback(t.second.id);
      expect(t.sent).toEqual(["side", "a=A"]);
      await expectWaiting(t, "second?", "ask2");
    }
    await t.s.rollback(t.first.id);
    if (o.pruned) await t.saver.prune(["t"], { userId: "alice" });
    expect(t.sent).toEqual(["side"]);
    await expectWaiting(t, "first?", "ask1");
    await t.graph.invoke(new Command({ resume: "B" }), t.config);
    expect(t.sent).toEqual(["side", "a=B"]);
    await expectWaiting(t, "second?", "ask2");
    expect(await t.graph.invoke(new Command({ resume: "D" }), t.config)).toMatchObject({ a: "B", b: "D", done: "done B D yes" });
    expect(t.sent).toEqual(["side", "a=B", "b=D"]);
    expect(await t.fp.verify()).toMatchObject({ ok: true });
  });

  it("rolled back to the first wait, run on without an answer: the undone answer is not given again", async () => {
    const t = await setup(durability);
    await t.s.rollback(t.first.id);
    await t.graph.invoke(null, t.config);
    expect(t.sent).toEqual(["side"]);
    await expectWaiting(t, "first?", "ask1");
  });
});

/** Thread "t": node "both" asks "q1", sends "q1=<answer>", asks "q2", sends "q2=<answer>", beside "side" (sends "side"). */
function askTwiceBesideGraph(saver: ForkpointSaver, inSubgraph: boolean) {
  const Log = Annotation.Root({ log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });
  const send = async (t: string) => (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t });
  const inner = new StateGraph(Log)
    .addNode("both", async () => {
      const a = interrupt("q1") as string;
      await send(`q1=${a}`);
      const b = interrupt("q2") as string;
      await send(`q2=${b}`);
      return { log: [`q1=${a}`, `q2=${b}`] };
    })
    .addNode("side", async () => {
      await send("side");
      return { log: ["side"] };
    })
    .addEdge(START, "both")
    .addEdge(START, "side")
    .addEdge("both", END)
    .addEdge("side", END);
  const root = () => inner.compile({ checkpointer: saver });
  if (!inSubgraph) return root();
  const outer = new StateGraph(Log).addNode("sub", inner.compile()).addEdge(START, "sub").addEdge("sub", END);
  // Driven as the root graph is (invoke, getState).
  return outer.compile({ checkpointer: saver }) as unknown as ReturnType<typeof root>;
}

describe.each(["sync", "async"] as const)("one node asks twice beside a journaled call, rolled back (durability %s)", (durability) => {
  it.each([false, true])("(in a subgraph: %s) answers the first question with the new answer", async (inSubgraph) => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = askTwiceBesideGraph(saver, inSubgraph);
    const config = { configurable: { thread_id: "t" }, durability };
    await graph.invoke({ log: ["start"] }, config);
    expect(sent).toEqual(["side"]);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const w1 = await s.checkpoint({ name: "waiting on q1" });
    await graph.invoke(new Command({ resume: "x" }), config);
    expect(sent).toEqual(["side", "q1=x"]);
    await s.rollback(w1.id);
    expect(sent).toEqual(["side"]);
    expect((await graph.getState(config)).tasks.flatMap((t) => t.interrupts).map((i) => i.value)).toEqual(["q1"]);
    // The answer "x" came after the checkpoint and its call is undone: "x2" answers the first question.
    await graph.invoke(new Command({ resume: "x2" }), config);
    expect(sent).toEqual(["side", "q1=x2"]);
    expect((await graph.getState(config)).tasks.flatMap((t) => t.interrupts).map((i) => i.value)).toEqual(["q2"]);
    const done = await graph.invoke(new Command({ resume: "y" }), config);
    expect(done.log.filter((l) => l.startsWith("q"))).toEqual(["q1=x2", "q2=y"]);
    // (The node runs again from its start once answered: it sends "q1=x2" again, as LangGraph reruns it.)
    expect(new Set(sent)).toEqual(new Set(["side", "q1=x2", "q2=y"]));
    expect(await fp.verify()).toMatchObject({ ok: true });
  });
});
