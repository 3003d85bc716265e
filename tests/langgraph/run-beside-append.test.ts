// A LangGraph run in flight when another server appends a message to its thread's session (no move): its next put
// would fork from its own last checkpoint and make that fork current, silently taking the message out of the
// conversation. It stops with SESSION_MOVED instead, as a run overtaken by a move does; the message stays current.
import { AIMessage } from "@langchain/core/messages";
import { MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ConflictError } from "../../src/index.js";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { LandingSaver, latch, say, texts } from "./helpers.js";

const dbs = tempDatabases();
const thread = { configurable: { thread_id: "t" } };

/** A thread with one whole run (hi, drafted, booked) and a second run held in flight after its first step. */
async function runInFlight() {
  const { fp, path } = dbs.open();
  const saver = new LandingSaver(fp, { userId: "alice" });
  let gate = latch();
  gate.open();
  let reached = latch();
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("first", () => ({ messages: [new AIMessage("drafted")] }))
    .addNode("second", async () => {
      reached.open();
      await gate.wait();
      return { messages: [new AIMessage("booked")] };
    })
    .addEdge(START, "first")
    .addEdge("first", "second")
    .compile({ checkpointer: saver });
  await graph.invoke(say("hi"), thread);
  const s = await saver.sessionFor("t", { userId: "alice" });
  gate = latch();
  reached = latch();
  const running = graph.invoke(say("plan"), thread);
  running.catch(() => undefined);
  await reached.wait();
  // LangGraph stores a step's checkpoint while the next step runs: the one after "first" (five messages) is in first.
  await saver.settledWith(5);
  expect((await s.history()).map((m) => m.content)).toEqual(["hi", "drafted", "booked", "plan", "drafted"]);
  return { fp, path, graph, s, running, release: () => gate.open() };
}

describe("a LangGraph run in flight when a message is appended to its session", () => {
  it("another server's append: the run stops with SESSION_MOVED; the message stays in the current conversation", async () => {
    const { path, graph, s, running, release } = await runInFlight();
    const other = await dbs.open({ path }).fp.getSession(s.id, { userId: "alice" });
    await other.append({ role: "user", content: "also a hotel" });
    release();
    const error = await rejectionOf(running);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ code: "SESSION_MOVED" });
    expect((await s.history()).map((m) => m.content)).toEqual(["hi", "drafted", "booked", "plan", "drafted", "also a hotel"]);
    expect(await s.branches()).toHaveLength(1);
    // The next run goes on from the appended message.
    const next = await graph.invoke(say("go on"), thread);
    expect(texts(next.messages).slice(5)).toEqual(["human:also a hotel", "human:go on", "ai:drafted", "ai:booked"]);
    expect(await s.branches()).toHaveLength(1);
  }, 30_000);

  it("an append through the same handle stops the run the same way", async () => {
    const { fp, s, running, release } = await runInFlight();
    await s.append({ role: "user", content: "wait" });
    release();
    expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
    expect((await s.history()).map((m) => m.content).at(-1)).toBe("wait");
    expect(await fp.verify()).toMatchObject({ ok: true });
  }, 30_000);

  it("state changes and tool calls of its own steps do not stop it", async () => {
    const { s, running, release } = await runInFlight();
    await s.setState({ note: "set while the run was in flight" });
    await s.recordToolCall({ tool: "lookup", args: { q: "hotel" }, result: { found: 1 } });
    release();
    await running;
    expect((await s.history()).map((m) => m.content)).toEqual(["hi", "drafted", "booked", "plan", "drafted", "booked"]);
    expect(await s.branches()).toHaveLength(1);
  }, 30_000);
});
