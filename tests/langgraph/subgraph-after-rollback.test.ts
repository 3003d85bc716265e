// A rollback of a thread that waited inside a subgraph takes the subgraph back too: it waits there again.
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { sendTool } from "./helpers.js";

const dbs = tempDatabases();

const Root = Annotation.Root({ pub: Annotation<string>(), done: Annotation<string>() });
const Sub = Annotation.Root({ pub: Annotation<string>() });

/** A subgraph whose "review" asks "publish?" and then, when `send`, sends "pub=<answer>" through the thread's session. */
function subgraphGraph(saver: ForkpointSaver, send: boolean) {
  const runs = { review: 0 };
  const review = new StateGraph(Sub)
    .addNode("review", async () => {
      const ok = interrupt("publish?") as string;
      runs.review++;
      if (send) await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: `pub=${ok}` });
      return { pub: `published: ${ok}` };
    })
    .addEdge(START, "review")
    .addEdge("review", END)
    .compile();
  const graph = new StateGraph(Root)
    .addNode("sub", review)
    .addNode("fin", (s) => ({ done: `done after ${s.pub}` }))
    .addEdge(START, "sub")
    .addEdge("sub", "fin")
    .addEdge("fin", END)
    .compile({ checkpointer: saver });
  return { graph, runs };
}

async function setup(durability: "sync" | "async", send = true) {
  const sent: string[] = [];
  const { fp } = dbs.open({ tools: [sendTool(sent)] });
  const saver = new ForkpointSaver(fp, { userId: "alice" });
  const { graph, runs } = subgraphGraph(saver, send);
  const config = { configurable: { thread_id: "t" }, durability };
  await graph.invoke({ pub: "none" }, config);
  const s = await saver.sessionFor("t", { userId: "alice" });
  const waitingId = (await graph.getState(config)).config.configurable!.checkpoint_id as string;
  const mine = await s.checkpoint({ name: "waiting in review" });
  const out = await graph.invoke(new Command({ resume: "yes" }), config);
  expect(out.done).toBe("done after published: yes");
  const { items } = await s.listCheckpoints({});
  const waiting = items.find(
    (c) => (c.metadata as { langgraph?: { checkpointId?: string } } | null)?.langgraph?.checkpointId === waitingId,
  )!;
  return { sent, s, graph, runs, config, mine, waiting };
}

type Graph = Awaited<ReturnType<typeof setup>>["graph"];
type Config = Awaited<ReturnType<typeof setup>>["config"];

/** The thread waits in the subgraph's "review" again, with its question. */
async function expectWaitingInReview(graph: Pick<Graph, "getState">, config: Config) {
  const state = await graph.getState(config, { subgraphs: true });
  expect(state.next).toEqual(["sub"]);
  expect(state.tasks.flatMap((t) => t.interrupts).map((i) => i.value)).toEqual(["publish?"]);
  expect((state.tasks[0]?.state as { next?: string[] } | undefined)?.next).toEqual(["review"]);
}

describe.each(["sync", "async"] as const)("a rollback while waiting inside a subgraph (durability %s)", (durability) => {
  it.each(["user", "LangGraph"] as const)("to the %s checkpoint: the subgraph waits again and runs its node anew", async (which) => {
    const { sent, s, graph, runs, config, mine, waiting } = await setup(durability);
    expect(sent).toEqual(["pub=yes"]);
    await s.rollback(which === "user" ? mine.id : waiting.id);
    expect(sent).toEqual([]);
    await expectWaitingInReview(graph, config);
    const out = await graph.invoke(new Command({ resume: "no" }), config);
    expect(out).toEqual({ pub: "published: no", done: "done after published: no" });
    expect(runs.review).toBe(2);
    expect(sent).toEqual(["pub=no"]);
  });

  it("with no call in the resumed step: the subgraph waits again", async () => {
    const { graph, runs, config, s, waiting } = await setup(durability, false);
    await s.rollback(waiting.id);
    await expectWaitingInReview(graph, config);
    const out = await graph.invoke(new Command({ resume: "no" }), config);
    expect(out.done).toBe("done after published: no");
    expect(runs.review).toBe(2);
  });

  it("a second rollback after the subgraph went on again waits in it once more", async () => {
    const { sent, s, graph, config, mine } = await setup(durability);
    await s.rollback(mine.id);
    await graph.invoke(new Command({ resume: "no" }), config);
    await s.rollback(mine.id);
    expect(sent).toEqual([]);
    await expectWaitingInReview(graph, config);
    const out = await graph.invoke(new Command({ resume: "maybe" }), config);
    expect(out.done).toBe("done after published: maybe");
    expect(sent).toEqual(["pub=maybe"]);
  });

  it("undo of the rollback, and a switch back to the first branch, show the run finished", async () => {
    const { sent, s, graph, config, mine } = await setup(durability);
    const first = (await s.info()).currentBranchId;
    await s.rollback(mine.id);
    await s.undo();
    expect(sent).toEqual(["pub=yes"]);
    let state = await graph.getState(config, { subgraphs: true });
    expect(state.next).toEqual([]);
    expect(state.values).toEqual({ pub: "published: yes", done: "done after published: yes" });
    await s.redo();
    await expectWaitingInReview(graph, config);
    await s.switchBranch(first);
    state = await graph.getState(config);
    expect(state.next).toEqual([]);
    expect(state.values.done).toBe("done after published: yes");
  });
});

describe("a rollback that leaves a subgraph's run", () => {
  it("takes a subgraph inside a subgraph back to where it waited", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const inner = new StateGraph(Sub)
      .addNode("review", async () => {
        const ok = interrupt("publish?") as string;
        await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: `pub=${ok}` });
        return { pub: `published: ${ok}` };
      })
      .addEdge(START, "review")
      .addEdge("review", END)
      .compile();
    const middle = new StateGraph(Sub).addNode("inner", inner).addEdge(START, "inner").addEdge("inner", END).compile();
    const graph = new StateGraph(Root)
      .addNode("middle", middle)
      .addNode("fin", (s) => ({ done: `done after ${s.pub}` }))
      .addEdge(START, "middle")
      .addEdge("middle", "fin")
      .addEdge("fin", END)
      .compile({ checkpointer: saver });
    const config = { configurable: { thread_id: "t" }, durability: "async" as const };
    await graph.invoke({ pub: "none" }, config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const waiting = await s.checkpoint({ name: "waiting in review" });
    await graph.invoke(new Command({ resume: "yes" }), config);
    await s.rollback(waiting.id);
    expect(sent).toEqual([]);
    const out = await graph.invoke(new Command({ resume: "no" }), config);
    expect(out.done).toBe("done after published: no");
    expect(sent).toEqual(["pub=no"]);
  });

  it("runs a subgraph that finished anew when the rollback undid its call", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const write = new StateGraph(Sub)
      .addNode("write", async (st) => {
        await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: st.pub });
        return { pub: `sent ${st.pub}` };
      })
      .addEdge(START, "write")
      .addEdge("write", END)
      .compile();
    const graph = new StateGraph(Root)
      .addNode("ask", () => ({ pub: interrupt("what?") as string }))
      .addNode("sub", write)
      .addEdge(START, "ask")
      .addEdge("ask", "sub")
      .addEdge("sub", END)
      .compile({ checkpointer: saver });
    const config = { configurable: { thread_id: "t" }, durability: "sync" as const };
    await graph.invoke({ pub: "none" }, config);
    await graph.invoke(new Command({ resume: "a" }), config);
    expect(sent).toEqual(["a"]);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const { items } = await s.listCheckpoints({});
    const beforeSub = items.find((c) => (c.metadata as { langgraph?: { step?: number } } | null)?.langgraph?.step === 1)!;
    await s.rollback(beforeSub.id);
    expect(sent).toEqual([]);
    expect((await graph.getState(config)).next).toEqual(["sub"]);
    const out = await graph.invoke(null, config);
    expect(out.pub).toBe("sent a");
    expect(sent).toEqual(["a"]);
  });
});

/**
 * A subgraph whose "review" asks "publish?" (then sends "pub=<answer>") beside an "audit" that sends "audit" and
 * finishes before the wait; `fin`: the parent graph goes on after the subgraph (a step more to prune away).
 */
function auditedGraph(saver: ForkpointSaver, fin: boolean) {
  const runs: string[] = [];
  const send = async (t: string) => (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t });
  const sub = new StateGraph(Sub)
    .addNode("review", async () => {
      const ok = interrupt("publish?") as string;
      runs.push("review");
      await send(`pub=${ok}`);
      return { pub: `published: ${ok}` };
    })
    .addNode("audit", async () => {
      runs.push("audit");
      await send("audit");
      return {};
    })
    .addEdge(START, "review")
    .addEdge(START, "audit")
    .addEdge("review", END)
    .addEdge("audit", END)
    .compile();
  const graph = fin
    ? new StateGraph(Root)
        .addNode("sub", sub)
        .addNode("fin", (s) => ({ done: `done after ${s.pub}` }))
        .addEdge(START, "sub")
        .addEdge("sub", "fin")
        .addEdge("fin", END)
        .compile({ checkpointer: saver })
    : new StateGraph(Root).addNode("sub", sub).addEdge(START, "sub").addEdge("sub", END).compile({ checkpointer: saver });
  return { graph, runs };
}

describe.each(["sync", "async"] as const)("keep_latest around a rollback to a wait inside a subgraph (durability %s)", (durability) => {
  it.each([
    ["before", false],
    ["after", false],
    ["before", true],
    ["after", true],
  ] as const)(
    "pruned %s the rollback (parent goes on: %s): the subgraph waits again, its finished node is not rerun",
    async (when, fin) => {
      const sent: string[] = [];
      const { fp } = dbs.open({ tools: [sendTool(sent)] });
      const saver = new ForkpointSaver(fp, { userId: "alice" });
      const { graph, runs } = auditedGraph(saver, fin);
      const config = { configurable: { thread_id: "t" }, durability };
      await graph.invoke({ pub: "none" }, config);
      const s = await saver.sessionFor("t", { userId: "alice" });
      const mine = await s.checkpoint({ name: "waiting in review" });
      await graph.invoke(new Command({ resume: "yes" }), config);
      expect(sent.sort()).toEqual(["audit", "pub=yes"]);
      if (when === "before") await saver.prune(["t"], { userId: "alice" });
      await s.rollback(mine.id);
      if (when === "after") await saver.prune(["t"], { userId: "alice" });
      expect(sent).toEqual(["audit"]);
      await expectWaitingInReview(graph, config);
      runs.length = 0;
      const out = await graph.invoke(new Command({ resume: "no" }), config);
      expect(out.pub).toBe("published: no");
      if (fin) expect(out.done).toBe("done after published: no");
      expect(runs).toEqual(["review"]);
      expect(sent).toEqual(["audit", "pub=no"]);
      expect(await fp.verify()).toMatchObject({ ok: true });
    },
  );

  it("a subgraph inside a subgraph, pruned after the rollback, waits again and reruns nothing that finished", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const runs: string[] = [];
    const send = async (t: string) => (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t });
    const review = new StateGraph(Sub)
      .addNode("review", async () => {
        const ok = interrupt("publish?") as string;
        runs.push("review");
        await send(`pub=${ok}`);
        return { pub: `published: ${ok}` };
      })
      .addEdge(START, "review")
      .addEdge("review", END)
      .compile();
    const middle = new StateGraph(Sub)
      .addNode("inner", review)
      .addNode("audit", async () => {
        runs.push("audit");
        await send("audit");
        return {};
      })
      .addEdge(START, "inner")
      .addEdge(START, "audit")
      .addEdge("inner", END)
      .addEdge("audit", END)
      .compile();
    const graph = new StateGraph(Root)
      .addNode("middle", middle)
      .addNode("fin", (s) => ({ done: `done after ${s.pub}` }))
      .addEdge(START, "middle")
      .addEdge("middle", "fin")
      .addEdge("fin", END)
      .compile({ checkpointer: saver });
    const config = { configurable: { thread_id: "t" }, durability };
    await graph.invoke({ pub: "none" }, config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const mine = await s.checkpoint({ name: "waiting in review" });
    await graph.invoke(new Command({ resume: "yes" }), config);
    await s.rollback(mine.id);
    await saver.prune(["t"], { userId: "alice" });
    expect(sent).toEqual(["audit"]);
    runs.length = 0;
    const out = await graph.invoke(new Command({ resume: "no" }), config);
    expect(out.done).toBe("done after published: no");
    expect(runs).toEqual(["review"]);
    expect(sent).toEqual(["audit", "pub=no"]);
  });
});
