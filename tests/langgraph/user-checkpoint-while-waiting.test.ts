// A user's checkpoint taken while a thread waits on an interrupt stands for that wait: a rollback to it shows the
// interrupt pending again, with the results of the tasks that had finished beside it.
import { Command } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { chargeThenReceiptGraph, sendTool } from "./helpers.js";

const dbs = tempDatabases();

const waitingGraph = (saver: ForkpointSaver) => chargeThenReceiptGraph(saver, "ok?");

describe("a user's checkpoint taken while a thread waits on an interrupt", () => {
  const config = { configurable: { thread_id: "t" }, durability: "sync" as const };

  it("a rollback to it after the thread was resumed waits there again; resuming anew keeps the finished task", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const { graph, runs } = waitingGraph(saver);
    await graph.invoke({ log: ["start"] }, config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const waiting = await s.checkpoint({ name: "waiting for approval" });
    expect((await graph.invoke(new Command({ resume: "yes" }), config)).log).toEqual([
      "start",
      "plan",
      "charged",
      "approved: yes",
      "receipt",
    ]);
    await s.rollback(waiting.id);
    expect(sent).toEqual(["charge"]);
    const state = await graph.getState(config);
    expect(state.next).toEqual(["other"]);
    expect(state.tasks.flatMap((t) => t.interrupts).map((i) => i.value)).toEqual(["ok?"]);
    expect(state.tasks.filter((t) => t.result !== undefined).map((t) => t.name)).toEqual(["act"]);
    const out = await graph.invoke(new Command({ resume: "no" }), config);
    expect(out.log).toEqual(["start", "plan", "charged", "approved: no", "receipt"]);
    expect(runs.act).toBe(1);
    expect(sent).toEqual(["charge", "receipt"]);
  });
});
