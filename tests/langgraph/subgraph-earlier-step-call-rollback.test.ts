// A subgraph whose call came in an earlier step of it than its wait (START → side → ask inside it): rolled back to its
// parent's checkpoint of the step (the call undone), it runs anew from its start, so the call is made again.
import { Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { Log, sendTool } from "./helpers.js";

const dbs = tempDatabases();

/** Thread "t": node "sub" is a subgraph whose "side" sends "side", then whose "ask" asks "q" and sends "q=<answer>". */
function sideThenAskGraph(saver: ForkpointSaver) {
  const send = async (t: string) => void (await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t }));
  const inner = new StateGraph(Log)
    .addNode("side", async () => {
      await send("side");
      return { log: ["side"] };
    })
    .addNode("ask", async () => {
      const a = interrupt("q") as string;
      await send(`q=${a}`);
      return { log: [`q=${a}`] };
    })
    .addEdge(START, "side")
    .addEdge("side", "ask")
    .addEdge("ask", END);
  return new StateGraph(Log).addNode("sub", inner.compile()).addEdge(START, "sub").addEdge("sub", END).compile({ checkpointer: saver });
}

describe.each(["sync", "async"] as const)(
  "a subgraph's earlier step's call, rolled back to its parent's step (durability %s)",
  (durability) => {
    it("makes the call again: the subgraph runs from its start, then asks", async () => {
      const sent: string[] = [];
      const { fp } = dbs.open({ tools: [sendTool(sent)] });
      const saver = new ForkpointSaver(fp, { userId: "alice" });
      const graph = sideThenAskGraph(saver);
      const config = { configurable: { thread_id: "t" }, durability };
      await graph.invoke({ log: ["start"] }, config);
      expect(sent).toEqual(["side"]);
      const s = await saver.sessionFor("t", { userId: "alice" });
      const stepId = (await graph.getState(config)).config.configurable!.checkpoint_id;
      const step = (await s.listCheckpoints({})).items.find((c) => (c.metadata as any)?.langgraph?.checkpointId === stepId)!;
      await s.rollback(step.id);
      expect(sent).toEqual([]);
      // The subgraph runs anew from its start: "side" sends again, and "ask" asks (the resume went to no wait yet).
      await graph.invoke(new Command({ resume: "x" }), config);
      expect(sent).toEqual(["side"]);
      const asked = (await graph.getState(config)).tasks.flatMap((t) => t.interrupts).map((i) => i.value);
      expect(asked).toEqual(["q"]);
      const out = await graph.invoke(new Command({ resume: "y" }), config);
      expect(out.log.at(-1)).toBe("q=y");
      expect(out.log.filter((t) => t === "side")).toHaveLength(1);
      expect(sent).toEqual(["side", "q=y"]);
      expect(await fp.verify()).toMatchObject({ ok: true });
    });
  },
);
