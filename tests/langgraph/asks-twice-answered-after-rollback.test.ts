// A task asking twice, its first question answered after a rollback to a user's checkpoint at the wait, asks its next.
import { Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { Log, sendTool } from "./helpers.js";

const dbs = tempDatabases();

describe("a rollback to a user's checkpoint at a wait the step was resumed past", () => {
  it("asks the next question of a task answered there since, keeping its answer", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const send = async (t: string) => (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t });
    const graph = new StateGraph(Log)
      .addNode("A", async () => {
        const v1 = interrupt("q1") as string;
        const v2 = interrupt("q2") as string;
        await send(`A:${v1},${v2}`);
        return { log: [`A:${v1},${v2}`] };
      })
      .addNode("B", async () => {
        const v = interrupt("qb") as string;
        await send(`qb=${v}`);
        return { log: [`qb=${v}`] };
      })
      .addEdge(START, "A")
      .addEdge(START, "B")
      .addEdge("A", END)
      .addEdge("B", END)
      .compile({ checkpointer: saver });
    const config = { configurable: { thread_id: "t" }, durability: "sync" as const };
    const waits = async () =>
      Object.fromEntries((await graph.getState(config)).tasks.flatMap((t) => t.interrupts).map((i) => [i.value as string, i.id as string]));
    await graph.invoke({ log: ["start"] }, config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const waiting = await s.checkpoint({ name: "waiting" });
    await graph.invoke(new Command({ resume: { [(await waits()).q1!]: "a" } }), config);
    await graph.invoke(new Command({ resume: { [(await waits()).qb!]: "b" } }), config);
    await s.rollback(waiting.id);
    expect(Object.keys(await waits()).sort()).toEqual(["q1", "qb"]);
    await graph.invoke(new Command({ resume: { [(await waits()).q1!]: "x" } }), config);
    const w = await waits();
    expect(Object.keys(w).sort()).toEqual(["q2", "qb"]);
    const out = await graph.invoke(new Command({ resume: { [w.q2!]: "y", [w.qb!]: "c" } }), config);
    expect([...out.log].sort()).toEqual(["A:x,y", "qb=c", "start"]);
    expect([...sent].sort()).toEqual(["A:x,y", "qb=c"]);
  });
});
