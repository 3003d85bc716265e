// A Command resume from the root's history checkpoint where a memory subgraph waited serves what that step left, no later turn.
import { HumanMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import type { RunnableConfig } from "@langchain/core/runnables";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { sendTool } from "./helpers.js";
import { asksTwiceGraph } from "./asks-twice-graph.js";

const dbs = tempDatabases();

describe.each(["async", "sync", "exit"] as const)("a memory subgraph resumed from the root's history (durability %s)", (durability) => {
  it.each(["node", "call"] as const)("serves the answers the world holds, the subgraph run as a %s", async (shape) => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = asksTwiceGraph(saver, shape);
    const config = { configurable: { thread_id: "t" }, durability };
    const answer = async (value: string, from: RunnableConfig = config) =>
      (await graph.invoke(new Command({ resume: value }), from)).seen as string;
    const turn = async (input: string, first: string, second: string) => {
      await graph.invoke({ messages: [new HumanMessage(input)] }, config);
      await answer(first);
      return answer(second);
    };
    expect(await turn("a", "p1", "q1")).toBe("p1,q1");
    expect(await turn("b", "p2", "q2")).toBe("p1,q1,p2,q2");
    expect(await turn("c", "p3", "q3")).toBe("p1,q1,p2,q2,p3,q3");
    // The root's checkpoint whose step ran the subgraph in turn 2 (it waited there on both questions).
    let waited: RunnableConfig | undefined;
    for await (const snapshot of graph.getStateHistory(config))
      if (snapshot.next.includes("sub") && snapshot.values.seen === "p1,q1") waited ??= snapshot.config;
    // LangGraph runs that step's subgraph again: it remembers turn 2, not turn 3, whose calls the run's fork undoes.
    expect(await answer("r", { ...waited!, durability } as RunnableConfig)).toBe("p1,q1,p2,q2");
    expect(sent).toEqual(["p1", "q1", "p2", "q2"]);
    expect((await graph.getState(config)).values.seen).toBe("p1,q1,p2,q2");
    expect(await turn("d", "p4", "q4")).toBe("p1,q1,p2,q2,p4,q4");
    expect(sent).toEqual(["p1", "q1", "p2", "q2", "p4", "q4"]);
  });
});
