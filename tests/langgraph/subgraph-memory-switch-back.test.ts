// A `checkpointer: true` subgraph resumed on a rollback's branch leaves the branch switched back to as it waited.
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { Log, sendTool } from "./helpers.js";

const dbs = tempDatabases();

describe("a checkpointer: true subgraph finished on a rollback's branch", () => {
  it("is resumed where it waited after a switch back to the first branch", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const send = async (t: string) => (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t });
    const runs = { side: 0 };
    const inner = new StateGraph(Log)
      .addNode("ask", async () => {
        const answer = interrupt("q") as string;
        await send(`q=${answer}`);
        return { log: [`q=${answer}`] };
      })
      .addNode("side", async () => {
        runs.side++;
        await send(`side ${runs.side}`);
        return { log: [`side ${runs.side}`] };
      })
      .addEdge(START, "ask")
      .addEdge(START, "side")
      .addEdge("ask", END)
      .addEdge("side", END)
      .compile({ checkpointer: true });
    const graph = new StateGraph(Annotation.Root({ log: Annotation<string[]>({ reducer: (_, b) => b, default: () => [] }) }))
      .addNode("sub", inner)
      .addEdge(START, "sub")
      .addEdge("sub", END)
      .compile({ checkpointer: saver });
    const config = { configurable: { thread_id: "t" }, durability: "sync" as const };
    await graph.invoke({ log: [] }, config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const b1 = (await s.info()).currentBranchId;
    const stepId = (await graph.getState(config)).config.configurable!.checkpoint_id as string;
    const step = (await s.listCheckpoints({})).items.find(
      (c) => (c.metadata as { langgraph?: { checkpointId?: string } } | null)?.langgraph?.checkpointId === stepId,
    )!;
    await s.rollback(step.id);
    const b2 = (await s.info()).currentBranchId;
    expect([...(await graph.invoke(new Command({ resume: "x" }), config)).log].sort()).toEqual(["q=x", "side 2"]);
    await s.switchBranch(b1);
    expect([...sent].sort()).toEqual(["side 1"]);
    const out = await graph.invoke(new Command({ resume: "y" }), config);
    expect([...out.log].sort()).toEqual(["q=y", "side 1"]);
    expect([...sent].sort()).toEqual(["q=y", "side 1"]);
    expect(runs.side).toBe(2);
    await s.switchBranch(b2);
    expect([...sent].sort()).toEqual(["q=x", "side 2"]);
    expect([...(await graph.getState(config)).values.log].sort()).toEqual(["q=x", "side 2"]);
  });
});
