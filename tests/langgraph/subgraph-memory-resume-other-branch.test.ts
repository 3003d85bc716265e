// A Command resume from a root checkpoint another branch holds serves the memory the run's fork keeps, as its calls do.
import { HumanMessage } from "@langchain/core/messages";
import { Command } from "@langchain/langgraph";
import type { RunnableConfig } from "@langchain/core/runnables";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { sendTool } from "./helpers.js";
import { asksTwiceGraph } from "./asks-twice-graph.js";

const dbs = tempDatabases();

function setup(shape: "node" | "call", durability: "async" | "sync" | "exit") {
  const sent: string[] = [];
  const { fp } = dbs.open({ tools: [sendTool(sent)] });
  const saver = new ForkpointSaver(fp, { userId: "alice" });
  const graph = asksTwiceGraph(saver, shape);
  const config = { configurable: { thread_id: "t" }, durability };
  const start = (input: string) => graph.invoke({ messages: [new HumanMessage(input)] }, config);
  const answer = async (value: string, from: RunnableConfig = config) =>
    (await graph.invoke(new Command({ resume: value }), { ...from, durability } as RunnableConfig)).seen as string;
  const turn = async (input: string, first: string, second: string) => {
    await start(input);
    await answer(first);
    return answer(second);
  };
  const session = () => saver.sessionFor("t", { userId: "alice" });
  /** Whether a root snapshot is turn 2's step, waiting in the subgraph. */
  const turn2Wait = (s: { next: string[]; values: { seen?: string } }) => s.next.includes("sub") && s.values.seen === "p1,q1";
  return { sent, saver, graph, config, start, answer, turn, session, turn2Wait };
}

describe.each(["async", "sync", "exit"] as const)(
  "a memory subgraph resumed from another branch's history (durability %s)",
  (durability) => {
    it.each(["node", "call"] as const)("remembers the step on the branch it forks from, the subgraph run as a %s", async (shape) => {
      const { sent, saver, graph, config, answer, turn, session, turn2Wait } = setup(shape, durability);
      await turn("a", "p1", "q1");
      const s = await session();
      const afterTurn1 = await s.checkpoint({ name: "after turn 1" });
      await turn("b", "p2", "q2");
      await turn("c", "p3", "q3");
      const b1 = (await s.info()).currentBranchId;
      await s.rollback(afterTurn1.id);
      expect(await turn("b'", "x", "y")).toBe("p1,q1,x,y");
      // Turn 2's wait on the first branch, walked back from its head: the current branch never held it.
      let waited: RunnableConfig | undefined;
      for (let at: RunnableConfig | undefined = await saver.configFor({ branchId: b1 }); at && !waited;) {
        const snapshot = await graph.getState(at);
        if (turn2Wait(snapshot)) waited = snapshot.config;
        at = snapshot.parentConfig;
      }
      // The run forks along that branch, keeping turn 2's answers: the subgraph remembers them, not the other branch's.
      expect(await answer("r", waited!)).toBe("p1,q1,p2,q2");
      expect(sent).toEqual(["p1", "q1", "p2", "q2"]);
      expect((await graph.getState(config)).values.seen).toBe("p1,q1,p2,q2");
      expect(await turn("d", "p4", "q4")).toBe("p1,q1,p2,q2,p4,q4");
      expect(sent).toEqual(["p1", "q1", "p2", "q2", "p4", "q4"]);
    });

    it.each(["node", "call"] as const)("remembers what the world keeps at a wait two branches share, as a %s", async (shape) => {
      const { sent, graph, config, start, answer, turn, session, turn2Wait } = setup(shape, durability);
      await turn("a", "p1", "q1");
      await start("b");
      const s = await session();
      const atWait = await s.checkpoint({ name: "turn 2 waits" });
      await answer("p2");
      await answer("q2");
      await turn("c", "p3", "q3");
      await s.rollback(atWait.id);
      await answer("x");
      expect(await answer("y")).toBe("p1,q1,x,y");
      await turn("d", "p4", "q4");
      let waited: RunnableConfig | undefined;
      for await (const snapshot of graph.getStateHistory(config)) if (turn2Wait(snapshot)) waited ??= snapshot.config;
      // Whichever branch the run's fork goes along, the subgraph remembers the answers the world holds after it.
      const seen = await answer("r", waited!);
      expect(seen).toBe(sent.join(","));
      expect((await graph.getState(config)).values.seen).toBe(seen);
      expect(await turn("e", "p5", "q5")).toBe(`${seen},p5,q5`);
      expect(sent.join(",")).toBe(`${seen},p5,q5`);
    });
  },
);
