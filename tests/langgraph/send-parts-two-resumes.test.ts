// Two resumes of one waiting thread at once, each running a `Send` fan-out whose parts call a tool: the calls interleave.
// Neither run's put could keep exactly its own calls; the run whose part called first goes on, the other's calls are
// refused before its tools run, so the world holds one run's calls and the head shows that run's results.
import type { RunnableConfig } from "@langchain/core/runnables";
import { Annotation, Command, END, START, Send, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { latch, Log, outcome, sendTool } from "./helpers.js";

const dbs = tempDatabases();

/** A saver telling when a run's step put landed and when a run first read the thread (by the config's `who`). */
class WatchedSaver extends ForkpointSaver {
  onRead?: (who: unknown) => void;
  onPut?: (who: unknown, step: number | undefined) => void;
  override async getTuple(config: RunnableConfig) {
    const tuple = await super.getTuple(config);
    this.onRead?.(config.configurable?.who);
    return tuple;
  }
  override async put(...args: Parameters<ForkpointSaver["put"]>) {
    const done = await super.put(...args);
    this.onPut?.(args[0].configurable?.who, args[2]?.step);
    return done;
  }
}

describe.each([
  ["its parts then end", false],
  ["its parts then ask", true],
])("two resumes of a waiting thread whose Send parts call a tool (%s)", (_, ask) => {
  it.each([
    ["A1 B1 A2 B2", "A"],
    ["B1 A1 B2 A2", "B"],
  ])("keeps one run's calls when they interleave as %s", async (order, winner) => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new WatchedSaver(fp, { userId: "alice" });
    const calls = order.split(" ");
    const turn = Object.fromEntries(calls.map((c) => [c, latch()]));
    const aFanned = latch();
    const bRead = latch();
    const allIn = latch();
    let arrived = 0;
    const graph = new StateGraph(Log)
      .addNode("ship", () => ({ log: [`fan ${interrupt("ship?") as string}`] }))
      .addNode("part", async (part: { k: number }, config: RunnableConfig) => {
        // The four parts (two per run) are under way; they call in the order given, each once the one before it has
        // called (or been refused).
        await bRead.wait();
        const me = `${String(config.configurable?.who)}${part.k}`;
        if (++arrived === calls.length) allIn.open();
        await allIn.wait();
        const i = calls.indexOf(me);
        if (i > 0) await turn[calls[i - 1]!]!.wait();
        try {
          await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: me });
        } finally {
          turn[me]!.open();
        }
        return { log: [ask ? `part ${part.k} ${interrupt(`ok ${part.k}?`) as string}` : `part ${part.k}`] };
      })
      .addEdge(START, "ship")
      .addConditionalEdges("ship", () => [new Send("part", { k: 1 }), new Send("part", { k: 2 })])
      .addEdge("part", END)
      .compile({ checkpointer: saver });
    const config = (who: string) => ({ configurable: { thread_id: "t", who }, durability: "sync" as const });
    await graph.invoke({ log: ["start"] }, config("x"));
    saver.onRead = (who) => {
      if (who === "B") bRead.open();
    };
    saver.onPut = (who, step) => {
      if (who === "A" && step === 1) aFanned.open();
    };
    // A's step fanning out lands; B is sent then, reading it: both runs run the two parts.
    const aRun = graph.invoke(new Command({ resume: "A" }), config("A"));
    await aFanned.wait();
    const bRun = graph.invoke(new Command({ resume: "B" }), config("B"));
    const settled = await Promise.allSettled([aRun, bRun]);

    // One run goes on; the other is stopped. The world holds the calls of the one going on, and nothing else.
    expect(settled.map(outcome)).toEqual(winner === "A" ? ["ok", "SESSION_MOVED"] : ["SESSION_MOVED", "ok"]);
    const own = [`${winner}1`, `${winner}2`];
    expect([...sent].sort()).toEqual(own);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const applied = (await s.toolTrack()).filter((c) => c.applied).map((c) => (c.args as { t: string }).t);
    expect(applied.sort()).toEqual(own);
    // The head shows that run's results: A's parts wait on their questions (A's answer went to "ship"); B's run,
    // resuming after "ship", answers them with its own.
    const state = await graph.getState(config("x"));
    const head = !ask
      ? { log: ["start", "fan A", "part 1", "part 2"], next: [] }
      : winner === "A"
        ? { log: ["start", "fan A"], next: ["part", "part"] }
        : { log: ["start", "fan A", "part 1 B", "part 2 B"], next: [] };
    expect({ log: state.values.log, next: state.next }).toEqual(head);
    expect((await fp.verify()).ok).toBe(true);
  });
});
