// A LangGraph run already under way when the session moves (another server's rollback, an edit): its next put would
// fork from its own last checkpoint and make that fork current. It is stopped with SESSION_MOVED instead, and the
// session stays where the move put it.
import { AIMessage } from "@langchain/core/messages";
import { MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ConflictError } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { LandingSaver, latch, say, texts } from "./helpers.js";

const dbs = tempDatabases();
const thread = { configurable: { thread_id: "t" } };

/** A two-node graph whose second node waits for `gate` (the run is in flight between its checkpoints). */
function gatedGraph(saver: ForkpointSaver, gate: () => Promise<void>, reached: () => void) {
  return new StateGraph(MessagesAnnotation)
    .addNode("first", () => ({ messages: [new AIMessage("drafted")] }))
    .addNode("second", async () => {
      reached();
      await gate();
      return { messages: [new AIMessage("booked")] };
    })
    .addEdge(START, "first")
    .addEdge("first", "second")
    .compile({ checkpointer: saver });
}

describe("a LangGraph run in flight when its session moves", () => {
  /** A thread with one whole run (hi, drafted, booked), a user's checkpoint after it, and a second run held in flight. */
  async function runInFlight() {
    const { fp, path } = dbs.open();
    const saver = new LandingSaver(fp, { userId: "alice" });
    let gate = latch();
    gate.open();
    let inSecond = latch();
    const graph = gatedGraph(
      saver,
      () => gate.wait(),
      () => inSecond.open(),
    );
    await graph.invoke(say("hi"), thread);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const cp = await s.checkpoint({ name: "after hi" });
    gate = latch();
    inSecond = latch();
    const running = graph.invoke(say("plan"), thread);
    running.catch(() => undefined);
    await inSecond.wait(); // "second" waits
    // LangGraph stores a step's checkpoint while the next step runs: the one after "first" (five messages) is in first.
    await saver.settledWith(5);
    expect((await s.history()).map((m) => m.content)).toEqual(["hi", "drafted", "booked", "plan", "drafted"]);
    return { fp, path, saver, graph, s, cp, running, release: () => gate.open() };
  }

  it("another server's rollback: the run stops with SESSION_MOVED at its next checkpoint; the rollback's branch stays current", async () => {
    const { path, graph, s, cp, running, release } = await runInFlight();
    const other = dbs.open({ path }).fp;
    const moved = await (await other.getSession(s.id, { userId: "alice" })).rollback(cp.id);
    release();
    const error = await rejectionOf(running);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ code: "SESSION_MOVED" });
    expect((await s.info()).currentBranchId).toBe(moved.branch.id);
    expect((await s.history()).map((m) => m.content)).toEqual(["hi", "drafted", "booked"]);
    expect(texts((await graph.getState(thread)).values.messages)).toEqual(["human:hi", "ai:drafted", "ai:booked"]);
    expect(await s.branches()).toHaveLength(2);
    // The next run goes on from where the session was moved, on its branch.
    const next = await graph.invoke(say("again"), thread);
    expect(texts(next.messages).slice(3)).toEqual(["human:again", "ai:drafted", "ai:booked"]);
    expect((await s.info()).currentBranchId).toBe(moved.branch.id);
    expect(await s.branches()).toHaveLength(2);
  }, 30_000);

  it("another server's rollback, then a LangGraph turn there: the run still stops; that turn is not undone", async () => {
    const { path, graph, s, cp, running, release } = await runInFlight();
    const otherFp = dbs.open({ path }).fp;
    const otherGraph = gatedGraph(
      new ForkpointSaver(otherFp, { userId: "alice" }),
      async () => undefined,
      () => undefined,
    );
    const moved = await (await otherFp.getSession(s.id, { userId: "alice" })).rollback(cp.id);
    await otherGraph.invoke(say("there"), thread);
    release();
    expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
    expect((await s.info()).currentBranchId).toBe(moved.branch.id);
    expect((await s.history()).map((m) => m.content)).toEqual(["hi", "drafted", "booked", "there", "drafted", "booked"]);
    expect(texts((await graph.getState(thread)).values.messages).slice(3)).toEqual(["human:there", "ai:drafted", "ai:booked"]);
  }, 30_000);

  it("two moves by another server (a rollback, then an edit there): the run stops; the edit's branch stays current", async () => {
    const { path, graph, s, cp, running, release } = await runInFlight();
    const other = await dbs.open({ path }).fp.getSession(s.id, { userId: "alice" });
    await other.rollback(cp.id);
    const question = (await other.history()).find((m) => m.content === "hi")!;
    const { branch } = await other.edit(question.id, { role: "user", content: "hello" });
    release();
    expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
    expect((await s.info()).currentBranchId).toBe(branch.id);
    expect(texts((await graph.getState(thread)).values.messages)).toEqual(["human:hello"]);
    expect(await s.branches()).toHaveLength(3);
  }, 30_000);

  it("moved away and back (a rollback, then its undo): the run goes on where it was", async () => {
    const { path, s, cp, running, release } = await runInFlight();
    const other = await dbs.open({ path }).fp.getSession(s.id, { userId: "alice" });
    const away = await other.rollback(cp.id);
    const back = await other.undo();
    expect(back.branch.id).not.toBe(away.branch.id);
    release();
    await running;
    expect((await s.info()).currentBranchId).toBe(back.branch.id);
    expect((await s.history()).map((m) => m.content)).toEqual(["hi", "drafted", "booked", "plan", "drafted", "booked"]);
  }, 30_000);

  it("moved away, back, away again, a run there, then a move that stays (a rollback to the head): the run still stops", async () => {
    const { path, s, cp, running, release } = await runInFlight();
    const otherFp = dbs.open({ path }).fp;
    const other = await otherFp.getSession(s.id, { userId: "alice" });
    const otherGraph = gatedGraph(
      new ForkpointSaver(otherFp, { userId: "alice" }),
      async () => undefined,
      () => undefined,
    );
    const away = await other.rollback(cp.id);
    await other.undo();
    await other.switchBranch(away.branch.id);
    await otherGraph.invoke(say("there"), thread);
    // Recorded as a move of its own (undo takes it back first), yet it left nothing behind: the switch before it did.
    await other.rollback((await other.checkpoint({ name: "here" })).id);
    release();
    expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
    expect((await s.info()).currentBranchId).toBe(away.branch.id);
    expect((await s.history()).map((m) => m.content)).toEqual(["hi", "drafted", "booked", "there", "drafted", "booked"]);
  }, 30_000);

  it("an edit through the same handle: the run stops the same way and the edit's branch stays current", async () => {
    const { fp, graph, s, running, release } = await runInFlight();
    const question = (await s.history()).find((m) => m.content === "hi")!;
    const { branch } = await s.edit(question.id, { role: "user", content: "hello" });
    release();
    expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
    expect((await s.info()).currentBranchId).toBe(branch.id);
    expect(texts((await graph.getState(thread)).values.messages)).toEqual(["human:hello"]);
    expect(await fp.verify()).toMatchObject({ ok: true });
  }, 30_000);

  it("a run that is not overtaken by a move still forks where LangGraph's time travel asks (an older checkpoint)", async () => {
    const { graph, s, cp, running, release } = await runInFlight();
    release();
    await running;
    const history = graph.getStateHistory(thread);
    const states = [];
    for await (const state of history) states.push(state);
    const older = states.find((st) => texts(st.values.messages ?? []).join() === "human:hi,ai:drafted,ai:booked")!;
    const forked = await graph.invoke(say("fork"), older.config);
    expect(texts(forked.messages)).toEqual(["human:hi", "ai:drafted", "ai:booked", "human:fork", "ai:drafted", "ai:booked"]);
    expect((await s.info()).currentBranchId).not.toBe(cp.branchId);
  }, 30_000);
});
