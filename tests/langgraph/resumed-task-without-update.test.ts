// A resumed task that returns no update is run again by the next resume (LangGraph's at-least-once), not refused.
import { Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { Log, sendTool } from "./helpers.js";

const dbs = tempDatabases();

describe("two waits answered one at a time, the first task returning no update", () => {
  it("runs that task again from its answer in the next resume, with no refusal", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const ask = (q: string) => async () => {
      const answer = interrupt(q) as string;
      await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: `${q}=${answer}` });
      return q === "qa" ? {} : { log: [`${q}=${answer}`] };
    };
    const graph = new StateGraph(Log)
      .addNode("A", ask("qa"))
      .addNode("B", ask("qb"))
      .addEdge(START, "A")
      .addEdge(START, "B")
      .addEdge("A", END)
      .addEdge("B", END)
      .compile({ checkpointer: saver });
    const config = { configurable: { thread_id: "t" }, durability: "sync" as const };
    const waits = async () =>
      Object.fromEntries((await graph.getState(config)).tasks.flatMap((t) => t.interrupts).map((i) => [i.value as string, i.id as string]));
    await graph.invoke({ log: ["start"] }, config);
    await graph.invoke(new Command({ resume: { [(await waits()).qa!]: "a" } }), config);
    const out = await graph.invoke(new Command({ resume: { [(await waits()).qb!]: "b" } }), config);
    expect([...out.log].sort()).toEqual(["qb=b", "start"]);
    // A stored no result: LangGraph runs it again from its answer, as with MemorySaver.
    expect([...sent].sort()).toEqual(["qa=a", "qa=a", "qb=b"]);
    expect((await graph.getState(config)).next).toEqual([]);
  });
});
