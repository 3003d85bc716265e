// A user's checkpoint taken while a thread waits on an interrupt stands for that wait: a rollback to it shows the
// interrupt pending again, with the results of the tasks that had finished beside it.
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { sendTool } from "./helpers.js";

const dbs = tempDatabases();

const Log = Annotation.Root({ log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });

/** "act" charges and "other" asks, side by side; then "after" sends a receipt. No channel is messages. */
function waitingGraph(saver: ForkpointSaver) {
  const runs = { act: 0 };
  const sessionOf = () => saver.sessionFor("t", { userId: "alice" });
  const graph = new StateGraph(Log)
    .addNode("plan", () => ({ log: ["plan"] }))
    .addNode("act", async () => {
      runs.act++;
      await (await sessionOf()).invoke("send", { t: "charge" });
      return { log: ["charged"] };
    })
    .addNode("other", () => ({ log: [`approved: ${interrupt("ok?") as string}`] }))
    .addNode("after", async () => {
      await (await sessionOf()).invoke("send", { t: "receipt" });
      return { log: ["receipt"] };
    })
    .addEdge(START, "plan")
    .addEdge("plan", "act")
    .addEdge("plan", "other")
    .addEdge("act", "after")
    .addEdge("other", "after")
    .addEdge("after", END)
    .compile({ checkpointer: saver });
  return { graph, runs };
}

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
