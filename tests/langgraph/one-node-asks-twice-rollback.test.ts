// A node that asks twice in one step (an interrupt, a call, another interrupt, a call): a rollback to a user's
// checkpoint taken while it waited on its first question never serves the answer given after it, whose call it undid.
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { sendTool } from "./helpers.js";

const dbs = tempDatabases();

const State = Annotation.Root({ log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });

/** Thread "t": node "both" asks "q1", sends "q1=<answer>", asks "q2", sends "q2=<answer>"; inside a subgraph or not. */
function askTwiceGraph(saver: ForkpointSaver, inSubgraph: boolean) {
  const send = async (t: string) => (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t });
  const both = async () => {
    const a = interrupt("q1") as string;
    await send(`q1=${a}`);
    const b = interrupt("q2") as string;
    await send(`q2=${b}`);
    return { log: [`q1=${a}`, `q2=${b}`] };
  };
  const inner = new StateGraph(State).addNode("both", both).addEdge(START, "both").addEdge("both", END);
  const root = () => inner.compile({ checkpointer: saver });
  if (!inSubgraph) return root();
  const sub = inner.compile();
  const outer = new StateGraph(State).addNode("sub", sub).addEdge(START, "sub").addEdge("sub", END);
  // Driven as the root graph is (invoke, getState): its node's name is the test's only difference.
  return outer.compile({ checkpointer: saver }) as unknown as ReturnType<typeof root>;
}

describe.each(["sync", "async"] as const)("one node asks twice, rolled back to its first wait (durability %s)", (durability) => {
  it.each([false, true])("(in a subgraph: %s) resumes with the new answer, not the undone one", async (inSubgraph) => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = askTwiceGraph(saver, inSubgraph);
    const config = { configurable: { thread_id: "t" }, durability };
    const node = inSubgraph ? "sub" : "both";
    await graph.invoke({ log: ["start"] }, config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const w1 = await s.checkpoint({ name: "waiting on q1" });
    await graph.invoke(new Command({ resume: "x" }), config);
    expect(sent).toEqual(["q1=x"]);
    await s.rollback(w1.id);
    expect(sent).toEqual([]);
    const state = await graph.getState(config);
    expect(state.next).toEqual([node]);
    expect(state.tasks.flatMap((t) => t.interrupts)).toHaveLength(1);
    // The answer "x" came after the checkpoint and its call is undone: "x2" answers the first question.
    const out = await graph.invoke(new Command({ resume: "x2" }), config);
    expect(out.log).toEqual(["start"]);
    expect(sent).toEqual(["q1=x2"]);
    // (LangGraph lists no next node once a task holds a resume value; its interrupt shows it waits.)
    expect((await graph.getState(config)).tasks.flatMap((t) => t.interrupts).map((i) => i.value)).toEqual(["q2"]);
    const done = await graph.invoke(new Command({ resume: "y" }), config);
    expect(done.log.slice(-2)).toEqual(["q1=x2", "q2=y"]);
    expect(sent.at(-1)).toBe("q2=y");
    expect(sent.filter((t) => t !== "q1=x2" && t !== "q2=y")).toEqual([]);
    expect(await fp.verify()).toMatchObject({ ok: true });
  });
});

describe.each(["sync", "async"] as const)("one node asks twice, rolled back to its first wait, shows (durability %s)", (durability) => {
  it.each([
    { inSubgraph: false, pruned: false, finished: false },
    { inSubgraph: true, pruned: false, finished: false },
    { inSubgraph: false, pruned: true, finished: false },
    { inSubgraph: true, pruned: true, finished: false },
    { inSubgraph: false, pruned: true, finished: true },
    { inSubgraph: true, pruned: true, finished: true },
  ])("its first question, not the second LangGraph stored over it ($inSubgraph, $pruned, $finished)", async (o) => {
    const { inSubgraph, pruned } = o;
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = askTwiceGraph(saver, inSubgraph);
    const config = { configurable: { thread_id: "t" }, durability };
    /** The questions the head shows: as read, with its subgraphs, and as the history lists the head's checkpoint. */
    const asked = async () => {
      const state = await graph.getState(config);
      const nested = await graph.getState(config, { subgraphs: true });
      const sub = nested.tasks[0]?.state as { tasks?: { interrupts: { value?: unknown }[] }[] } | undefined;
      let listed: typeof state | undefined;
      for await (const h of graph.getStateHistory(config))
        if (h.config.configurable?.checkpoint_id === state.config.configurable?.checkpoint_id) listed = h;
      const values = (s: { tasks: readonly { interrupts: readonly { value?: unknown }[] }[] } | undefined) =>
        s?.tasks.flatMap((t) => t.interrupts).map((i) => i.value);
      return {
        head: values(state),
        listed: values(listed),
        inner: inSubgraph ? sub?.tasks?.flatMap((t) => t.interrupts).map((i) => i.value) : [],
      };
    };
    const shows = (q: string) => ({ head: [q], listed: [q], inner: inSubgraph ? [q] : [] });
    await graph.invoke({ log: ["start"] }, config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const w1 = await s.checkpoint({ name: "waiting on q1" });
    await graph.invoke(new Command({ resume: "x" }), config);
    expect(await asked()).toEqual(shows("q2"));
    // Answered both (the step went on: pruned, what it wrote past its wait goes), or still waiting on the second.
    if (o.finished) await graph.invoke(new Command({ resume: "y" }), config);
    await s.rollback(w1.id);
    if (pruned) await saver.prune(["t"], { userId: "alice" });
    expect(await asked()).toEqual(shows("q1"));
    if (o.finished) return;
    await graph.invoke(new Command({ resume: "x2" }), config);
    expect(sent).toEqual(["q1=x2"]);
    expect(await asked()).toEqual(shows("q2"));
    // Back to the first wait again: the first question still.
    await s.rollback(w1.id);
    expect(await asked()).toEqual(shows("q1"));
    expect(await fp.verify()).toMatchObject({ ok: true });
  });
});
