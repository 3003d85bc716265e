// A node that asked twice (and finished), rolled back to its first wait: each resume after it answers the next question.
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { sendTool } from "./helpers.js";

const dbs = tempDatabases();

const State = Annotation.Root({ log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });

/**
 * Thread "t": node "both" (sends "go" first when `callFirst`) asks "q1", sends "q1=<answer>", asks "q2", sends
 * "q2=<answer>"; inside a subgraph or not.
 */
function askTwiceGraph(saver: ForkpointSaver, inSubgraph: boolean, callFirst = false) {
  const send = async (t: string) => (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t });
  const both = async () => {
    if (callFirst) await send("go");
    const a = interrupt("q1") as string;
    await send(`q1=${a}`);
    const b = interrupt("q2") as string;
    await send(`q2=${b}`);
    return { log: [`q1=${a}`, `q2=${b}`] };
  };
  const inner = new StateGraph(State).addNode("both", both).addEdge(START, "both").addEdge("both", END);
  const root = () => inner.compile({ checkpointer: saver });
  if (!inSubgraph) return root();
  const outer = new StateGraph(State).addNode("sub", inner.compile()).addEdge(START, "sub").addEdge("sub", END);
  // Driven as the root graph is (invoke, getState).
  return outer.compile({ checkpointer: saver }) as unknown as ReturnType<typeof root>;
}

/**
 * Runs the thread to its first wait, takes a checkpoint there (the user's, or the LangGraph checkpoint's own with
 * `toStep`), answers "x" and "y" (the graph finishes; only "x" with `finish` false), and rolls back to that checkpoint.
 */
async function finishedThenRolledBack(o: {
  durability: "sync" | "async";
  inSubgraph: boolean;
  toStep: boolean;
  callFirst?: boolean;
  finish?: boolean;
}) {
  const sent: string[] = [];
  const { fp } = dbs.open({ tools: [sendTool(sent)] });
  const saver = new ForkpointSaver(fp, { userId: "alice" });
  const graph = askTwiceGraph(saver, o.inSubgraph, o.callFirst);
  const config = { configurable: { thread_id: "t" }, durability: o.durability };
  const asked = async () => (await graph.getState(config)).tasks.flatMap((t) => t.interrupts).map((i) => i.value);
  await graph.invoke({ log: ["start"] }, config);
  const s = await saver.sessionFor("t", { userId: "alice" });
  const stepId = (await graph.getState(config)).config.configurable?.checkpoint_id as string;
  const w1 = o.toStep
    ? (await s.listCheckpoints({})).items.find(
        (c) => (c.metadata as { langgraph?: { checkpointId?: string } } | null)?.langgraph?.checkpointId === stepId,
      )!
    : await s.checkpoint({ name: "waiting on q1" });
  await graph.invoke(new Command({ resume: "x" }), config);
  if (o.finish !== false) {
    const done = await graph.invoke(new Command({ resume: "y" }), config);
    expect(done.log.slice(-2)).toEqual(["q1=x", "q2=y"]);
  }
  await s.rollback(w1.id);
  expect(sent).toEqual(o.callFirst ? ["go"] : []);
  expect(await asked()).toEqual(["q1"]);
  return { sent, fp, s, graph, config, asked, w1 };
}

describe.each(["sync", "async"] as const)(
  "one node asked twice and finished, rolled back to its first wait (durability %s)",
  (durability) => {
    it.each([
      { inSubgraph: false, toStep: false },
      { inSubgraph: true, toStep: false },
      { inSubgraph: false, toStep: true },
      { inSubgraph: true, toStep: true },
    ])("the first resume answers q1, the next q2 (in a subgraph: $inSubgraph, to the step's checkpoint: $toStep)", async (o) => {
      const t = await finishedThenRolledBack({ durability, ...o });
      await t.graph.invoke(new Command({ resume: "x2" }), t.config);
      expect(t.sent).toEqual(["q1=x2"]);
      expect(await t.asked()).toEqual(["q2"]);
      const out = await t.graph.invoke(new Command({ resume: "y2" }), t.config);
      expect(out.log.slice(-2)).toEqual(["q1=x2", "q2=y2"]);
      // (The node runs again from its start once answered: it sends "q1=x2" again, as LangGraph reruns it.)
      expect(new Set(t.sent)).toEqual(new Set(["q1=x2", "q2=y2"]));
      expect(await t.asked()).toEqual([]);
      expect(await t.fp.verify()).toMatchObject({ ok: true });
    });

    it.each([false, true])(
      "rolled back there again after x2, asks q1 again and takes the new answers (in a subgraph: %s)",
      async (inSubgraph) => {
        const t = await finishedThenRolledBack({ durability, inSubgraph, toStep: false });
        await t.graph.invoke(new Command({ resume: "x2" }), t.config);
        expect(await t.asked()).toEqual(["q2"]);
        await t.s.rollback(t.w1.id);
        expect(t.sent).toEqual([]);
        expect(await t.asked()).toEqual(["q1"]);
        await t.graph.invoke(new Command({ resume: "x3" }), t.config);
        expect(t.sent).toEqual(["q1=x3"]);
        expect(await t.asked()).toEqual(["q2"]);
        const out = await t.graph.invoke(new Command({ resume: "y3" }), t.config);
        expect(out.log.slice(-2)).toEqual(["q1=x3", "q2=y3"]);
        expect(new Set(t.sent)).toEqual(new Set(["q1=x3", "q2=y3"]));
      },
    );

    it.each([
      { inSubgraph: false, finish: true },
      { inSubgraph: true, finish: true },
      { inSubgraph: false, finish: false },
      { inSubgraph: true, finish: false },
    ])("run on without an answer (its first call lands again): asks q1, not given the undone answers ($inSubgraph, $finish)", async (o) => {
      const t = await finishedThenRolledBack({ durability, toStep: false, callFirst: true, ...o });
      await t.graph.invoke(null, t.config);
      expect(await t.asked()).toEqual(["q1"]);
      await t.graph.invoke(new Command({ resume: "x2" }), t.config);
      expect(await t.asked()).toEqual(["q2"]);
      const out = await t.graph.invoke(new Command({ resume: "y2" }), t.config);
      expect(out.log.slice(-2)).toEqual(["q1=x2", "q2=y2"]);
      expect(new Set(t.sent)).toEqual(new Set(["go", "q1=x2", "q2=y2"]));
    });
  },
);
