// A switch back to a branch serves the resume values given on it, not those a run on another branch wrote over them.
import { Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { Log, sendTool } from "./helpers.js";

const dbs = tempDatabases();

describe("a task resumed on two branches at the same checkpoint", () => {
  it("is served each branch's own answers after a switch back", async () => {
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
    const resume = async (q: string, v: string) => graph.invoke(new Command({ resume: { [(await waits())[q]!]: v } }), config);
    await graph.invoke({ log: ["start"] }, config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const waiting = await s.checkpoint({ name: "waiting" });
    const b1 = (await s.info()).currentBranchId;
    await resume("q1", "a");
    await resume("qb", "b");
    await s.rollback(waiting.id);
    await resume("q1", "x");
    await s.switchBranch(b1);
    const out = await resume("q2", "y");
    expect([...out.log].sort()).toEqual(["A:a,y", "qb=b", "start"]);
    expect([...sent].sort()).toEqual(["A:a,y", "qb=b"]);
  });
});
