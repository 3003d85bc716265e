// A thread's pending writes (a finished task's results, an interrupt) survive tool calls and state changes recorded on
// its session after its checkpoint: a parallel node's call made through `sessionFor` is not run again on resume,
// unless a rollback undid that call.
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import type { SessionHandle } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { approvalGraph, say, sendTool, texts } from "./helpers.js";

const dbs = tempDatabases();

const Log = Annotation.Root({ log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });

/** A superstep of two nodes: "act" journals a call through the thread's session; "other" interrupts, or fails once. */
function parallelGraph(saver: ForkpointSaver, other: "interrupt" | "fail") {
  const runs = { act: 0 };
  let failing = true;
  let actDone!: () => void;
  const acted = new Promise<void>((resolve) => (actDone = resolve));
  const graph = new StateGraph(Log)
    .addNode("plan", () => ({ log: ["plan"] }))
    .addNode("act", async () => {
      runs.act++;
      await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: "charge" });
      setTimeout(actDone, 0);
      return { log: ["charged"] };
    })
    .addNode("other", async () => {
      if (other === "interrupt") return { log: [`approved: ${interrupt("send the receipt?") as string}`] };
      // After "act" finished (its write taken): the superstep fails beside a finished task.
      if (failing) {
        await acted;
        await new Promise((resolve) => setTimeout(resolve, 20));
        throw new Error("other failed");
      }
      return { log: ["other"] };
    })
    .addEdge(START, "plan")
    .addEdge("plan", "act")
    .addEdge("plan", "other")
    .addEdge("act", END)
    .addEdge("other", END)
    .compile({ checkpointer: saver });
  return { graph, runs, recover: () => (failing = false) };
}

/** The forkpoint checkpoint holding LangGraph checkpoint `id`. */
async function holding(s: SessionHandle, id: unknown) {
  const { items } = await s.listCheckpoints({});
  return items.find((c) => (c.metadata as { langgraph?: { checkpointId?: string } } | null)?.langgraph?.checkpointId === id)!;
}

describe.each(["async", "sync"] as const)('a node\'s call beside a parallel node that stops (durability "%s")', (durability) => {
  const config = { configurable: { thread_id: "t" }, durability };

  it("an interrupt: resuming runs the interrupted node only; the call is made once", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const { graph, runs } = parallelGraph(saver, "interrupt");
    const paused = await graph.invoke({ log: ["start"] }, config);
    expect((paused as { __interrupt__?: { value: unknown }[] }).__interrupt__?.map((i) => i.value)).toEqual(["send the receipt?"]);
    const state = await graph.getState(config);
    expect(state.next).toEqual(["other"]);
    expect(state.tasks.flatMap((t) => t.interrupts)).toHaveLength(1);
    const out = await graph.invoke(new Command({ resume: "yes" }), config);
    expect(out.log).toEqual(["start", "plan", "charged", "approved: yes"]);
    expect(runs.act).toBe(1);
    expect(sent).toEqual(["charge"]);
    expect((await (await saver.sessionFor("t", { userId: "alice" })).toolTrack()).map((c) => c.tool)).toEqual(["send"]);
  });

  it("a failure: invoke(null) retries the failed node only; the call is made once", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const { graph, runs, recover } = parallelGraph(saver, "fail");
    await expect(graph.invoke({ log: ["start"] }, config)).rejects.toThrow("other failed");
    const state = await graph.getState(config);
    expect(state.next).toEqual(["other"]);
    expect(state.tasks.filter((t) => t.result !== undefined).map((t) => t.name)).toEqual(["act"]);
    recover();
    const out = await graph.invoke(null, config);
    expect(out.log).toEqual(["start", "plan", "charged", "other"]);
    expect(runs.act).toBe(1);
    expect(sent).toEqual(["charge"]);
  });

  /** A thread waiting at an interrupt beside a finished node whose call was journaled: where it waits, its session. */
  async function waitingThread() {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const { graph, runs } = parallelGraph(saver, "interrupt");
    await graph.invoke({ log: ["start"] }, config);
    const waitingAt = (await graph.getState(config)).config.configurable!.checkpoint_id;
    const s = await saver.sessionFor("t", { userId: "alice" });
    return { sent, graph, runs, s, waitingAt };
  }

  it("a rollback to the checkpoint it waits at undoes the call: resuming runs that node again", async () => {
    const { sent, graph, runs, s, waitingAt } = await waitingThread();
    const cp = await holding(s, waitingAt);
    await s.rollback(cp.id);
    expect(sent).toEqual([]);
    const state = await graph.getState(config);
    expect(state.next).toEqual(["act", "other"]);
    expect(state.tasks.flatMap((t) => t.interrupts)).toHaveLength(1);
    const out = await graph.invoke(new Command({ resume: "yes" }), config);
    expect(out.log).toEqual(["start", "plan", "charged", "approved: yes"]);
    expect(runs.act).toBe(2);
    expect(sent).toEqual(["charge"]);
  });

  it("switched back to the branch that holds the call, the finished node's result is kept again", async () => {
    const { sent, graph, runs, s, waitingAt } = await waitingThread();
    const original = (await s.branches()).find((b) => b.current)!;
    const cp = await holding(s, waitingAt);
    await s.rollback(cp.id);
    await s.switchBranch(original.id);
    expect(sent).toEqual(["charge"]);
    expect((await graph.getState(config)).next).toEqual(["other"]);
    const out = await graph.invoke(new Command({ resume: "yes" }), config);
    expect(out.log).toEqual(["start", "plan", "charged", "approved: yes"]);
    expect(runs.act).toBe(1);
  });
});

describe("a thread waiting on an interrupt", () => {
  const config = { configurable: { thread_id: "t" } };

  it.each(["setState", "invoke"] as const)("still shows its interrupt after the app's %s on the session, and resumes", async (write) => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = approvalGraph(saver);
    await graph.invoke(say("book it"), config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    if (write === "setState") await s.setState({ seen: true });
    else await s.invoke("send", { t: "note" });
    const state = await graph.getState(config);
    expect(state.next).toEqual(["ask"]);
    expect(state.tasks.flatMap((t) => t.interrupts).map((i) => i.value)).toEqual(["approve?"]);
    const out = await graph.invoke(new Command({ resume: "yes" }), config);
    expect(texts(out.messages)).toEqual(["human:book it", "ai:approved: yes"]);
    // The app's write stays where it was made: on the one branch, before the answer.
    expect(await s.branches()).toHaveLength(1);
    expect(write === "setState" ? await s.getState() : sent).toEqual(write === "setState" ? { seen: true } : ["note"]);
  });
});
