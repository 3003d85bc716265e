// Two resumes of one waiting thread sent at once, where one run goes on from a step the other already ran: the run
// served the other's step (a subgraph's head it put, results it stored) is stopped (`SESSION_MOVED`), and the head
// shows only results whose calls the world holds; a refused run's answer never answers the thread's next question.
import type { RunnableConfig } from "@langchain/core/runnables";
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { latch, Log, outcome, sendTool } from "./helpers.js";

const dbs = tempDatabases();
const thread = { configurable: { thread_id: "t" }, durability: "async" as const };
const as = (submit: string) => ({ ...thread, configurable: { ...thread.configurable, submit } });

/** A saver that holds a run's first read of the root thread (the run named by its config's `submit`) until released. */
class HeldSaver extends ForkpointSaver {
  holds = new Map<string, { read: () => void; then: Promise<void> }>();
  override async getTuple(config: RunnableConfig) {
    const tuple = await super.getTuple(config);
    const hold = config.configurable?.checkpoint_ns ? undefined : this.holds.get(String(config.configurable?.submit));
    if (hold) {
      this.holds.delete(String(config.configurable?.submit));
      hold.read();
      await hold.then;
    }
    return tuple;
  }
}

const Sub = Annotation.Root({ mem: Log.spec.log, seen: Annotation<string>() });
const Root = Annotation.Root({ seen: Annotation<string>() });

/** A root graph over a `checkpointer: true` subgraph whose nodes ask Q1 then Q2, each sending its answer. */
function memoryGraph(saver: ForkpointSaver, send: (t: string) => Promise<unknown>, invokedInNode: boolean) {
  const ask = (q: string) => async (state: typeof Sub.State) => {
    const answer = interrupt(q) as string;
    await send(`${q}=${answer}`);
    return { mem: [`${q}=${answer}`], seen: [...state.mem, `${q}=${answer}`].join(",") };
  };
  const sub = new StateGraph(Sub)
    .addNode("a1", ask("Q1"))
    .addNode("a2", ask("Q2"))
    .addEdge(START, "a1")
    .addEdge("a1", "a2")
    .addEdge("a2", END)
    .compile({ checkpointer: true });
  const root = invokedInNode
    ? new StateGraph(Root).addNode("sub", async () => ({ seen: (await sub.invoke({})).seen }))
    : new StateGraph(Root).addNode("sub", sub);
  return root.addEdge(START, "sub").addEdge("sub", END).compile({ checkpointer: saver });
}

describe.each([
  ["added as a node", false],
  ["invoked inside a node", true],
])("two resumes at a memory subgraph's wait (%s)", (_, invokedInNode) => {
  it("stops the run that reads the subgraph's step the other ran since it started", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new HeldSaver(fp, { userId: "alice" });
    const s = () => saver.sessionFor("t", { userId: "alice" });
    const graph = memoryGraph(saver, async (t) => (await s()).invoke("send", { t }), invokedInNode);
    const resume = (v: string, config: RunnableConfig = thread) => graph.invoke(new Command({ resume: v }), config);
    await graph.invoke({}, thread);
    await resume("p1");
    // B reads the thread (waiting on Q2) first; A then answers Q2 and ends while B waits; B goes on after it.
    const bRead = latch();
    const release = latch();
    saver.holds.set("B", { read: bRead.open, then: release.wait() });
    const bRun = resume("B", as("B"));
    await bRead.wait();
    const aRun = resume("A", as("A"));
    await aRun.catch(() => undefined);
    release.open();
    const settled = await Promise.allSettled([aRun, bRun]);

    expect(settled.map(outcome)).toEqual(["ok", "SESSION_MOVED"]);
    const state = await graph.getState(thread);
    expect({ head: state.values.seen, world: sent }).toEqual({ head: "Q1=p1,Q2=A", world: ["Q1=p1", "Q2=A"] });
    // The next turn's memory goes on from A's answer.
    await graph.invoke({}, thread);
    await resume("p2");
    expect((await resume("q2")).seen).toBe("Q1=p1,Q2=A,Q1=p2,Q2=q2");
    expect(sent).toEqual(["Q1=p1", "Q2=A", "Q1=p2", "Q2=q2"]);
    expect((await fp.verify()).ok).toBe(true);
  });
});

describe("two resumes of a node that asks twice, sent at once", () => {
  it("never answers the node's second question with the stopped run's answer", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new HeldSaver(fp, { userId: "alice" });
    const graph = new StateGraph(Log)
      .addNode("ship", async () => {
        const what = interrupt("what?") as string;
        await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: what });
        const sure = interrupt("sure?") as string;
        return { log: [`${what} ${sure}`] };
      })
      .addEdge(START, "ship")
      .addEdge("ship", END)
      .compile({ checkpointer: saver });
    await graph.invoke({ log: ["start"] }, thread);
    // B reads the thread first; A answers "what?", sends, and waits on "sure?"; B's send then comes after A's.
    const bRead = latch();
    const release = latch();
    saver.holds.set("B", { read: bRead.open, then: release.wait() });
    const bRun = graph.invoke(new Command({ resume: "B" }), as("B"));
    await bRead.wait();
    const aRun = graph.invoke(new Command({ resume: "A" }), as("A"));
    await aRun.catch(() => undefined);
    release.open();
    const settled = await Promise.allSettled([aRun, bRun]);
    expect(settled.map(outcome)).toEqual(["ok", "SESSION_MOVED"]);

    // The thread waits on A's "sure?": answering it goes on with A's answer, not B's (the node runs again from its
    // start, its call with it, as LangGraph runs a resumed task).
    const done = await graph.invoke(new Command({ resume: "yes" }), thread);
    expect({ log: done.log, world: sent }).toEqual({ log: ["start", "A yes"], world: ["A", "A"] });
    expect((await fp.verify()).ok).toBe(true);
  });
});
