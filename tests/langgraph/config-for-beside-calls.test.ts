// configFor a user's checkpoint taken while a thread waits beside a journaled call: the finished task's results are
// served there, so invoking from it runs only what had not finished (the call is not made again).
import { Command } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { chargeThenReceiptGraph, sendTool } from "./helpers.js";

const dbs = tempDatabases();

const parallelGraph = (saver: ForkpointSaver) => chargeThenReceiptGraph(saver, "send the receipt?");

describe.each(["async", "sync"] as const)('configFor a user\'s checkpoint beside a journaled call (durability "%s")', (durability) => {
  const config = { configurable: { thread_id: "t" }, durability };

  async function waitingThread() {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const { graph, runs } = parallelGraph(saver);
    await graph.invoke({ log: ["start"] }, config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const mine = await s.checkpoint({ name: "waiting" });
    return { sent, saver, graph, runs, s, mine };
  }

  it("shows the interrupt and the finished task's result there", async () => {
    const { saver, graph, mine } = await waitingThread();
    const state = await graph.getState(await saver.configFor({ checkpointId: mine.id }));
    expect(state.tasks.flatMap((t) => t.interrupts).map((i) => i.value)).toEqual(["send the receipt?"]);
    expect(state.tasks.filter((t) => t.result !== undefined).map((t) => t.name)).toEqual(["act"]);
  });

  it("resuming from it at the head runs the interrupted task only; the call is made once", async () => {
    const { sent, saver, graph, runs, s, mine } = await waitingThread();
    const at = await saver.configFor({ checkpointId: mine.id });
    const out = await graph.invoke(new Command({ resume: "yes" }), { ...at, durability });
    expect(out.log).toEqual(["start", "plan", "charged", "approved: yes", "receipt"]);
    expect(runs.act).toBe(1);
    expect(sent).toEqual(["charge", "receipt"]);
    expect((await s.toolTrack()).map((c) => c.tool)).toEqual(["send", "send"]);
  });

  it("after a rollback to it once the thread went on, resuming from it runs the interrupted task only", async () => {
    const { sent, saver, graph, runs, s, mine } = await waitingThread();
    expect((await graph.invoke(new Command({ resume: "no" }), config)).log).toEqual([
      "start",
      "plan",
      "charged",
      "approved: no",
      "receipt",
    ]);
    await s.rollback(mine.id);
    expect(sent).toEqual(["charge"]);
    const at = await saver.configFor({ checkpointId: mine.id });
    const out = await graph.invoke(new Command({ resume: "yes" }), { ...at, durability });
    expect(out.log).toEqual(["start", "plan", "charged", "approved: yes", "receipt"]);
    expect(runs.act).toBe(1);
    expect(sent).toEqual(["charge", "receipt"]);
  });

  it("after the app's own call since it, gives the head: invoking keeps that call; a rollback to it first undoes it", async () => {
    const { sent, saver, graph, runs, s, mine } = await waitingThread();
    await s.invoke("send", { t: "later" });
    const head = (await graph.getState(config)).config.configurable!.checkpoint_id;
    expect((await saver.configFor({ checkpointId: mine.id })).configurable!.checkpoint_id).toBe(head);
    await s.rollback(mine.id);
    expect(sent).toEqual(["charge"]);
    const at = await saver.configFor({ checkpointId: mine.id });
    const out = await graph.invoke(new Command({ resume: "yes" }), { ...at, durability });
    expect(out.log).toEqual(["start", "plan", "charged", "approved: yes", "receipt"]);
    expect(runs.act).toBe(1);
    expect(sent).toEqual(["charge", "receipt"]);
  });
});
