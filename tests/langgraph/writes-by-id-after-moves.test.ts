// A checkpoint read by its id (getTuple with a checkpoint_id, list) serves the pending writes the session's current
// lineage still holds: a finished task's result whose call a move undid is not served as done.
import { Annotation, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import type { CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { describe, expect, it } from "vitest";
import type { SessionHandle } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { sendTool } from "./helpers.js";

const dbs = tempDatabases();

const Log = Annotation.Root({ log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });

/** "act" journals a call through the thread's session and "other" interrupts, side by side. */
function parallelGraph(saver: ForkpointSaver) {
  return new StateGraph(Log)
    .addNode("plan", () => ({ log: ["plan"] }))
    .addNode("act", async () => {
      await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: "charge" });
      return { log: ["charged"] };
    })
    .addNode("other", () => ({ log: [`approved: ${interrupt("send the receipt?") as string}`] }))
    .addEdge(START, "plan")
    .addEdge("plan", "act")
    .addEdge("plan", "other")
    .addEdge("act", END)
    .addEdge("other", END)
    .compile({ checkpointer: saver });
}

/** The forkpoint checkpoint holding LangGraph checkpoint `id`. */
async function holding(s: SessionHandle, id: unknown) {
  const { items } = await s.listCheckpoints({});
  return items.find((c) => (c.metadata as { langgraph?: { checkpointId?: string } } | null)?.langgraph?.checkpointId === id)!;
}

/** The channels of a tuple's pending writes, sorted. */
const channels = (t: CheckpointTuple | undefined) => (t?.pendingWrites ?? []).map(([, channel]) => channel).sort();

describe("pending writes read by a checkpoint's id after moves", () => {
  const config = { configurable: { thread_id: "t" } };

  async function waitingThread() {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = parallelGraph(saver);
    await graph.invoke({ log: ["start"] }, config);
    const waitingAt = (await graph.getState(config)).config.configurable!.checkpoint_id as string;
    const s = await saver.sessionFor("t", { userId: "alice" });
    const byId = { configurable: { thread_id: "t", checkpoint_ns: "", checkpoint_id: waitingAt } };
    const listed = async () => {
      const out: CheckpointTuple[] = [];
      for await (const t of saver.list(byId)) out.push(t);
      return out;
    };
    return { sent, saver, s, waitingAt, byId, listed };
  }

  it("the finished task's result is served while its call stands", async () => {
    const { saver, byId, listed } = await waitingThread();
    const all = channels(await saver.getTuple(byId));
    expect(all).toContain("__interrupt__");
    expect(all).toContain("log");
    expect(channels((await listed())[0])).toEqual(all);
  });

  it("after a rollback to it undid the call, only its interrupt: as the thread's head shows it", async () => {
    const { sent, saver, s, waitingAt, byId, listed } = await waitingThread();
    await s.rollback((await holding(s, waitingAt)).id);
    expect(sent).toEqual([]);
    expect(channels(await saver.getTuple(config))).toEqual(["__interrupt__"]);
    expect(channels(await saver.getTuple(byId))).toEqual(["__interrupt__"]);
    expect(channels((await listed())[0])).toEqual(["__interrupt__"]);
  });

  it("once the session went on past the rollback, still only its interrupt; switched back, every write again", async () => {
    const { saver, s, waitingAt, byId, listed } = await waitingThread();
    const original = (await s.branches()).find((b) => b.current)!;
    await s.rollback((await holding(s, waitingAt)).id);
    await s.append({ role: "user", content: "hold on" });
    expect((await saver.getTuple(config))?.config.configurable?.checkpoint_id).not.toBe(waitingAt);
    expect(channels(await saver.getTuple(byId))).toEqual(["__interrupt__"]);
    expect(channels((await listed())[0])).toEqual(["__interrupt__"]);
    await s.switchBranch(original.id);
    expect(channels(await saver.getTuple(byId))).toContain("log");
    expect(channels((await listed())[0])).toContain("log");
  });
});
