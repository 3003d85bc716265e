// A run from the thread whose input put is still landing when a message is appended (or the session moved and appended).
// A serializer holds the input's put until the run's node appended: the put would otherwise fork from the run's
// parent, taking the message out of the conversation and undoing the calls recorded since. It stops with SESSION_MOVED.
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { ConflictError, type Forkpoint } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { appendLineTool, readOrNull, tempDir } from "../fixtures/file-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { say, texts } from "./helpers.js";

const dbs = tempDatabases();
const thread = { configurable: { thread_id: "t" } };

/** A serializer that holds the metadata of puts of a source (`holds`) until its promise settles. */
class HeldSerializer extends JsonPlusSerializer {
  holds = new Map<string, Promise<void>>();
  override async dumpsTyped(value: unknown): Promise<[string, Uint8Array]> {
    const source = (value as { source?: unknown } | null)?.source;
    const hold = typeof source === "string" ? this.holds.get(source) : undefined;
    if (hold) await hold;
    return super.dumpsTyped(value);
  }
}

/**
 * A thread with one run ("one", "asks one"), a checkpoint there and a call recorded after it; `during` runs in the
 * next run's node while that run's input put is held, and the put is released once it is done.
 */
async function heldThread(during: (fp: Forkpoint, sessionId: string, checkpointId: string) => Promise<void>, between?: string) {
  const { fp, path: file } = dbs.open({ tools: [appendLineTool()] });
  const serde = new HeldSerializer();
  const saver = new ForkpointSaver(fp, { userId: "alice", serde });
  const log = path.join(tempDir(), "log");
  let inNode: (() => Promise<void>) | null = null;
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("think", async (state) => {
      await inNode?.();
      return { messages: [new AIMessage(`asks ${String(state.messages.at(-1)!.content)}`)] };
    })
    .addEdge(START, "think")
    .addEdge("think", END)
    .compile({ checkpointer: saver });
  await graph.invoke(say("one"), thread);
  const s = await saver.sessionFor("t", { userId: "alice" });
  const cp = await s.checkpoint({ name: "after one" });
  await s.invoke("append_line", { path: log, line: "x1" });
  // The app's own message between the runs: the next run goes on from the head LangGraph has no checkpoint of.
  if (between !== undefined) await s.append({ role: "user", content: between });
  let release = () => {};
  serde.holds.set("input", new Promise<void>((resolve) => (release = resolve)));
  inNode = async () => {
    inNode = null;
    await during(fp, s.id, cp.id);
    release();
  };
  const running = graph.invoke(say("two"), thread);
  running.catch(() => undefined);
  return { file, graph, s, log, running };
}

describe("a LangGraph run from the thread whose input put is held while a message is appended", () => {
  it("stops with SESSION_MOVED: the message and the call recorded before the run stay current", async () => {
    const { file, graph, s, log, running } = await heldThread(async (_fp, sessionId) => {
      const other = await dbs.open({ path: file }).fp.getSession(sessionId, { userId: "alice" });
      await other.append({ role: "user", content: "during" });
    });
    const error = await rejectionOf(running);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ code: "SESSION_MOVED" });
    expect((await s.history()).map((m) => m.content)).toEqual(["one", "asks one", "during"]);
    expect(await s.branches()).toHaveLength(1);
    expect((await s.toolTrack()).map((t) => t.applied)).toEqual([true]);
    expect(readOrNull(log)).toBe("x1\n");
    // The next run goes on from the appended message.
    const next = await graph.invoke(say("go on"), thread);
    expect(texts(next.messages)).toEqual(["human:one", "ai:asks one", "human:during", "human:go on", "ai:asks go on"]);
    expect(readOrNull(log)).toBe("x1\n");
  }, 30_000);

  it("goes on from a head the app appended to before the run: stops the same way", async () => {
    const { graph, s, log, running } = await heldThread(async (fp, sessionId) => {
      await (await fp.getSession(sessionId, { userId: "alice" })).append({ role: "user", content: "during" });
    }, "between");
    expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
    expect((await s.history()).map((m) => m.content)).toEqual(["one", "asks one", "between", "during"]);
    expect(await s.branches()).toHaveLength(1);
    expect(readOrNull(log)).toBe("x1\n");
    const next = await graph.invoke(say("go on"), thread);
    expect(texts(next.messages).slice(2)).toEqual(["human:between", "human:during", "human:go on", "ai:asks go on"]);
  }, 30_000);

  it("after a rollback by another handle, the appended message stays current", async () => {
    const { graph, s, log, running } = await heldThread(async (fp, sessionId, checkpointId) => {
      const other = await fp.getSession(sessionId, { userId: "alice" });
      await other.rollback(checkpointId);
      await other.append({ role: "user", content: "during" });
    });
    expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
    expect((await s.history()).map((m) => m.content)).toEqual(["one", "asks one", "during"]);
    expect(await s.branches()).toHaveLength(2);
    // The rollback undid the call; nothing else moved.
    expect(readOrNull(log)).toBe("");
    const next = await graph.invoke(say("go on"), thread);
    expect(texts(next.messages).slice(2)).toEqual(["human:during", "human:go on", "ai:asks go on"]);
    expect(await s.branches()).toHaveLength(2);
  }, 30_000);

  it("a run addressing the checkpoint before an append still forks there (time travel)", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("think", (state) => ({ messages: [new AIMessage(`asks ${String(state.messages.at(-1)!.content)}`)] }))
      .addEdge(START, "think")
      .addEdge("think", END)
      .compile({ checkpointer: saver });
    await graph.invoke(say("one"), thread);
    const before = (await graph.getState(thread)).config;
    const s = await saver.sessionFor("t", { userId: "alice" });
    await s.append({ role: "user", content: "later" });
    const out = await graph.invoke(say("two"), before);
    expect(texts(out.messages)).toEqual(["human:one", "ai:asks one", "human:two", "ai:asks two"]);
    expect(await s.branches()).toHaveLength(2);
  }, 30_000);
});
