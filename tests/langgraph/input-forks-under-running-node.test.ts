// An input sent while another run's node is under way, its call made (the thread has no messages channel): the input
// forks before that call, undoing it. The run whose node made it then lands its step after the call again, replaying
// it, not beside the same point without it: the head never shows a result whose call is undone.
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { Checkpoint, CheckpointMetadata } from "@langchain/langgraph-checkpoint";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { latch, Log, outcome, sendTool } from "./helpers.js";

const dbs = tempDatabases();

/** A saver telling when run B's first step checkpoint landed. */
class WatchedSaver extends ForkpointSaver {
  onPut?: (config: RunnableConfig, metadata: CheckpointMetadata) => void;
  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    versions: Record<string, string | number>,
  ) {
    const out = await super.put(config, checkpoint, metadata, versions);
    this.onPut?.(config, metadata);
    return out;
  }
}

describe("an input sent while another run's node is under way, its call made", () => {
  it("lands the other run's step after its call, replayed", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new WatchedSaver(fp, { userId: "alice" });
    const aCalled = latch();
    const bStepped = latch();
    let aRun: Promise<unknown> = Promise.resolve();
    const St = Annotation.Root({ order: Annotation<string>(), log: Log.spec.log });
    const graph = new StateGraph(St)
      .addNode("place", async (state) => {
        if (state.order === "B") await aRun.catch(() => undefined);
        await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: state.order });
        // A's node returns once B's input (a fork before A's call) and B's first step landed.
        if (state.order === "A") {
          aCalled.open();
          await bStepped.wait();
        }
        return { log: [`placed ${state.order}`] };
      })
      .addEdge(START, "place")
      .addEdge("place", END)
      .compile({ checkpointer: saver });
    const config = (who: string) => ({ configurable: { thread_id: "t", who }, durability: "sync" as const });
    await graph.invoke({ order: "first" }, config("x"));
    saver.onPut = (c, metadata) => {
      if (c.configurable?.who === "B" && metadata.source === "loop") bStepped.open();
    };
    aRun = graph.invoke({ order: "A" }, config("A"));
    await aCalled.wait();
    const settled = await Promise.allSettled([aRun, graph.invoke({ order: "B" }, config("B"))]);

    const head = (await graph.getState(config("x"))).values.log as string[];
    expect({ head, world: [...sent].sort() }).toEqual({ head: ["placed first", "placed A"], world: ["A", "first"] });
    const s = await saver.sessionFor("t", { userId: "alice" });
    expect((await s.toolTrack()).filter((c) => c.applied).map((c) => (c.args as { t: string }).t)).toEqual(["first", "A"]);
    expect((await fp.verify()).ok).toBe(true);
    expect(settled.map(outcome)).toEqual(["ok", "SESSION_MOVED"]);
  });
});
