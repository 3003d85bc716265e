// A node that asks twice in one step with no call between: a rollback to a user's checkpoint taken at its first
// question (or to LangGraph's own checkpoint of that wait), after an answer that left it asking the second, forks
// there and asks the first question again.
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { sendTool } from "./helpers.js";

const dbs = tempDatabases();

const State = Annotation.Root({ log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });

/** Thread "t": node "both" asks "q1", then "q2", then sends "<a1>,<a2>"; inside a subgraph or not. */
function askTwiceGraph(saver: ForkpointSaver, inSubgraph: boolean) {
  const both = async () => {
    const a = interrupt("q1") as string;
    const b = interrupt("q2") as string;
    await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: `${a},${b}` });
    return { log: [`${a},${b}`] };
  };
  const inner = new StateGraph(State).addNode("both", both).addEdge(START, "both").addEdge("both", END);
  const root = () => inner.compile({ checkpointer: saver });
  if (!inSubgraph) return root();
  const outer = new StateGraph(State).addNode("sub", inner.compile()).addEdge(START, "sub").addEdge("sub", END);
  return outer.compile({ checkpointer: saver }) as unknown as ReturnType<typeof root>;
}

const asked = (state: { tasks: { interrupts: { value?: unknown }[] }[] }) => state.tasks.flatMap((t) => t.interrupts).map((i) => i.value);

async function setup(durability: "sync" | "async", inSubgraph: boolean) {
  const sent: string[] = [];
  const { fp } = dbs.open({ tools: [sendTool(sent)] });
  const saver = new ForkpointSaver(fp, { userId: "alice" });
  const graph = askTwiceGraph(saver, inSubgraph);
  const config = { configurable: { thread_id: "t" }, durability };
  await graph.invoke({ log: ["start"] }, config);
  const s = await saver.sessionFor("t", { userId: "alice" });
  const atQ1 = await s.checkpoint({ name: "waiting on q1" });
  await graph.invoke(new Command({ resume: "a" }), config);
  return { fp, sent, s, graph, config, atQ1 };
}

describe.each(["sync", "async"] as const)("one node asks twice with no call between (durability %s)", (durability) => {
  it.each([false, true])("(in a subgraph: %s) a rollback to the first wait forks and asks it again", async (inSubgraph) => {
    const { fp, sent, s, graph, config, atQ1 } = await setup(durability, inSubgraph);
    expect(asked(await graph.getState(config))).toEqual(["q2"]);
    const first = (await s.info()).currentBranchId;
    await s.rollback(atQ1.id);
    expect((await s.branches()).length).toBe(2);
    expect((await s.info()).currentBranchId).not.toBe(first);
    expect(asked(await graph.getState(config))).toEqual(["q1"]);
    await graph.invoke(new Command({ resume: "x" }), config);
    expect(asked(await graph.getState(config))).toEqual(["q2"]);
    const out = await graph.invoke(new Command({ resume: "y" }), config);
    // (A subgraph's whole log is added to its parent's: its "start" too.)
    expect(out.log.at(-1)).toBe("x,y");
    expect(out.log).not.toContain("a,y");
    expect(sent).toEqual(["x,y"]);
    expect(await fp.verify()).toMatchObject({ ok: true });
  });

  it.each([false, true])(
    "(in a subgraph: %s) a rollback to LangGraph's own checkpoint of the first wait forks and asks it again",
    async (inSubgraph) => {
      const { fp, sent, s, graph, config } = await setup(durability, inSubgraph);
      const hist = [];
      for await (const h of graph.getStateHistory(config)) hist.push(h);
      const waitId = hist.find((h) => asked(h).length > 0)!.config.configurable!.checkpoint_id as string;
      const listed = await s.listCheckpoints({ auto: true });
      const lg = listed.items.find(
        (c) => (c.metadata as { langgraph?: { checkpointId?: string } } | null)?.langgraph?.checkpointId === waitId,
      )!;
      expect(lg).toBeDefined();
      await s.rollback(lg.id);
      expect((await s.branches()).length).toBe(2);
      expect(asked(await graph.getState(config))).toEqual(["q1"]);
      await graph.invoke(new Command({ resume: "x" }), config);
      const out = await graph.invoke(new Command({ resume: "y" }), config);
      expect(out.log.at(-1)).toBe("x,y");
      expect(sent).toEqual(["x,y"]);
      expect(await fp.verify()).toMatchObject({ ok: true });
    },
  );

  it("a switch back to the first branch asks its second question, answered with its first answer", async () => {
    const { sent, s, graph, config, atQ1 } = await setup(durability, false);
    const first = (await s.info()).currentBranchId;
    await s.rollback(atQ1.id);
    await graph.invoke(new Command({ resume: "x" }), config);
    await s.switchBranch(first);
    expect(asked(await graph.getState(config))).toEqual(["q2"]);
    const out = await graph.invoke(new Command({ resume: "y" }), config);
    expect(out.log).toEqual(["start", "a,y"]);
    expect(sent).toEqual(["a,y"]);
  });

  it("a rollback to a checkpoint taken after the answer makes no fork and asks the second question", async () => {
    const { s, graph, config } = await setup(durability, false);
    const atQ2 = await s.checkpoint({ name: "waiting on q2" });
    await s.rollback(atQ2.id);
    expect((await s.branches()).length).toBe(1);
    expect(asked(await graph.getState(config))).toEqual(["q2"]);
  });

  it("a second rollback to the first wait, answered again there, forks again", async () => {
    const { s, graph, config, atQ1 } = await setup(durability, false);
    await s.rollback(atQ1.id);
    await s.rollback(atQ1.id);
    expect((await s.branches()).length).toBe(2);
    await graph.invoke(new Command({ resume: "x" }), config);
    await s.rollback(atQ1.id);
    expect((await s.branches()).length).toBe(3);
    expect(asked(await graph.getState(config))).toEqual(["q1"]);
  });
});
