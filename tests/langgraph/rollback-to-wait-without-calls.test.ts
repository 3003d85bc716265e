// A rollback to a user's checkpoint taken while a thread waited moves the thread back there even when nothing but
// LangGraph's own checkpoints came after it (the resumed step added no message and made no tool call).
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { sendTool } from "./helpers.js";

const dbs = tempDatabases();

const Log = Annotation.Root({ log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });

/** "act" charges and "other" asks, side by side, and the run ends there: a resume writes nothing to the session. */
function waitingGraph(saver: ForkpointSaver) {
  const runs = { act: 0 };
  const graph = new StateGraph(Log)
    .addNode("plan", () => ({ log: ["plan"] }))
    .addNode("act", async () => {
      runs.act++;
      await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: "charge" });
      return { log: ["charged"] };
    })
    .addNode("other", () => ({ log: [`approved: ${interrupt("ok?") as string}`] }))
    .addEdge(START, "plan")
    .addEdge("plan", "act")
    .addEdge("plan", "other")
    .addEdge("act", END)
    .addEdge("other", END)
    .compile({ checkpointer: saver });
  return { graph, runs };
}

const config = { configurable: { thread_id: "t" }, durability: "sync" as const };

async function setup() {
  const sent: string[] = [];
  const { fp } = dbs.open({ tools: [sendTool(sent)] });
  const saver = new ForkpointSaver(fp, { userId: "alice" });
  const { graph, runs } = waitingGraph(saver);
  await graph.invoke({ log: ["start"] }, config);
  const s = await saver.sessionFor("t", { userId: "alice" });
  const waiting = await s.checkpoint({ name: "waiting for approval" });
  await graph.invoke(new Command({ resume: "no" }), config);
  return { sent, s, graph, runs, waiting };
}

const interruptsOf = (state: { tasks: { interrupts: { value?: unknown }[] }[] }) =>
  state.tasks.flatMap((t) => t.interrupts).map((i) => i.value);

describe("a rollback to a user's checkpoint taken while waiting, with no call after the resume", () => {
  it("waits at the interrupt again, and resuming with another value goes on from there", async () => {
    const { sent, s, graph, runs, waiting } = await setup();
    const r = await s.rollback(waiting.id);
    expect((await s.branches()).length).toBe(2);
    expect(r.undone).toEqual([]);
    const state = await graph.getState(config);
    expect(state.next).toEqual(["other"]);
    expect(interruptsOf(state)).toEqual(["ok?"]);
    expect(state.values.log).toEqual(["start", "plan", "charged"]);
    const out = await graph.invoke(new Command({ resume: "yes" }), config);
    expect(out.log).toEqual(["start", "plan", "charged", "approved: yes"]);
    expect(runs.act).toBe(1);
    expect(sent).toEqual(["charge"]);
  });

  it("a second rollback to it makes no empty fork", async () => {
    const { s, graph, waiting } = await setup();
    await s.rollback(waiting.id);
    const branch = (await s.info()).currentBranchId;
    await s.rollback(waiting.id);
    expect((await s.branches()).length).toBe(2);
    expect((await s.info()).currentBranchId).toBe(branch);
    expect((await graph.getState(config)).next).toEqual(["other"]);
  });

  it("a rollback from the wait to a checkpoint taken once it finished shows it finished", async () => {
    const { s, graph, waiting } = await setup();
    const finished = await s.checkpoint({ name: "finished" });
    await s.rollback(waiting.id);
    expect((await graph.getState(config)).next).toEqual(["other"]);
    await s.rollback(finished.id);
    const state = await graph.getState(config);
    expect(state.next).toEqual([]);
    expect(interruptsOf(state)).toEqual([]);
    expect(state.values.log).toEqual(["start", "plan", "charged", "approved: no"]);
  });
});
