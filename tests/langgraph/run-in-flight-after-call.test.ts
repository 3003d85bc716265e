// A LangGraph run in flight whose node made its tool call before another server moved the session away, with a
// LangGraph turn landing where the move went: the run stops with SESSION_MOVED, and that turn is not undone.
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ConflictError } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { LandingSaver, latch, say, sendTool, texts } from "./helpers.js";

const dbs = tempDatabases();
const thread = { configurable: { thread_id: "t" } };

/** A two-node graph whose second node sends the user's message through the thread's session, then waits for `gate`. */
function sendingGraph(saver: ForkpointSaver, gate: () => Promise<void>, reached: () => void) {
  return new StateGraph(MessagesAnnotation)
    .addNode("first", () => ({ messages: [new AIMessage("drafted")] }))
    .addNode("second", async (state) => {
      const asked = state.messages.filter((m: BaseMessage) => m.getType() === "human").at(-1)!;
      await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: String(asked.content) });
      reached();
      await gate();
      return { messages: [new AIMessage("booked")] };
    })
    .addEdge(START, "first")
    .addEdge("first", "second")
    .compile({ checkpointer: saver });
}

describe("a LangGraph run in flight that made its call before its session moved", () => {
  /**
   * A thread with a user's checkpoint after its first run (hi), a second run (one), and `hold()`: a third run (plan)
   * held in flight after its call; another server's graph on the same database, whose runs are never held.
   */
  async function callMadeInFlight() {
    const sent: string[] = [];
    const { fp, path } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new LandingSaver(fp, { userId: "alice" });
    let gate = latch();
    gate.open();
    let reached = latch();
    const graph = sendingGraph(
      saver,
      () => gate.wait(),
      () => reached.open(),
    );
    await graph.invoke(say("hi"), thread);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const cp = await s.checkpoint({ name: "after hi" });
    await graph.invoke(say("one"), thread);
    const otherFp = dbs.open({ path, tools: [sendTool(sent)] }).fp;
    const otherSaver = new ForkpointSaver(otherFp, { userId: "alice" });
    const otherGraph = sendingGraph(
      otherSaver,
      async () => undefined,
      () => undefined,
    );
    const other = await otherFp.getSession(s.id, { userId: "alice" });
    const hold = async () => {
      gate = latch();
      reached = latch();
      const running = graph.invoke(say("plan"), thread);
      running.catch(() => undefined);
      await reached.wait(); // "second" sent "plan" and waits
      await saver.settledWith(8);
      expect(sent.at(-1)).toBe("plan");
      return { running, release: () => gate.open() };
    };
    return { sent, graph, otherGraph, otherSaver, s, other, cp, hold };
  }

  it("another server's switch, then a turn there: the run stops; the turn and its call stay", async () => {
    const { sent, graph, otherGraph, s, other, cp, hold } = await callMadeInFlight();
    const home = (await s.info()).currentBranchId;
    const away = await other.rollback(cp.id);
    await otherGraph.invoke(say("there"), thread);
    await other.switchBranch(home);
    expect(sent).toEqual(["hi", "one"]);
    const { running, release } = await hold();
    await other.switchBranch(away.branch.id);
    await otherGraph.invoke(say("again"), thread);
    release();
    const error = await rejectionOf(running);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ code: "SESSION_MOVED" });
    expect((await s.info()).currentBranchId).toBe(away.branch.id);
    expect(sent).toEqual(["hi", "there", "again"]);
    const expected = ["human:hi", "ai:drafted", "ai:booked", "human:there", "ai:drafted", "ai:booked"];
    expect(texts((await graph.getState(thread)).values.messages)).toEqual([...expected, "human:again", "ai:drafted", "ai:booked"]);
  }, 30_000);

  it("another server's rollback, then a turn there: the run stops; the turn and its call stay", async () => {
    const { sent, graph, otherGraph, s, other, cp, hold } = await callMadeInFlight();
    const { running, release } = await hold();
    const away = await other.rollback(cp.id);
    await otherGraph.invoke(say("there"), thread);
    release();
    expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
    expect((await s.info()).currentBranchId).toBe(away.branch.id);
    expect(sent).toEqual(["hi", "there"]);
    expect(texts((await graph.getState(thread)).values.messages)).toEqual([
      "human:hi",
      "ai:drafted",
      "ai:booked",
      "human:there",
      "ai:drafted",
      "ai:booked",
    ]);
    // The next run goes on from where the session was moved, on its branch.
    await graph.invoke(say("next"), thread);
    expect((await s.info()).currentBranchId).toBe(away.branch.id);
    expect(sent).toEqual(["hi", "there", "next"]);
  }, 30_000);

  it("another server's time travel, then a prune of its fork's first checkpoint: both runs finish", async () => {
    const { sent, graph, otherGraph, otherSaver, hold } = await callMadeInFlight();
    const { running, release } = await hold();
    const history = [];
    for await (const state of otherGraph.getStateHistory(thread)) history.push(state);
    const afterHi = history.find((state) => state.values.messages.length === 3 && state.next.length === 0)!;
    await otherGraph.invoke(say("travel"), afterHi.config);
    // keep_latest drops the checkpoint the saver's fork landed (its mark): the fork stays told apart from a user's move.
    await otherSaver.prune(["t"]);
    release();
    await running;
    expect(sent).toEqual(["hi", "one", "plan"]);
    const expected = ["human:hi", "ai:drafted", "ai:booked", "human:one", "ai:drafted", "ai:booked"];
    expect(texts((await graph.getState(thread)).values.messages)).toEqual([...expected, "human:plan", "ai:drafted", "ai:booked"]);
  }, 30_000);

  for (const durability of ["async", "exit"] as const)
    it(`another server's time travel, then a turn on its fork ("${durability}"): the run stops; the turn stays`, async () => {
      const { sent, graph, otherGraph, s, hold } = await callMadeInFlight();
      const { running, release } = await hold();
      const history = [];
      for await (const state of otherGraph.getStateHistory(thread)) history.push(state);
      const afterHi = history.find((state) => state.values.messages.length === 3 && state.next.length === 0)!;
      // (Under "exit" a time-travel run's node call is refused: the travel runs under "async", the turn after it not.)
      await otherGraph.invoke(say("travel"), afterHi.config);
      const fork = (await s.info()).currentBranchId;
      // A later turn on the saver's fork: the run left behind would undo it (and its call) if it went on.
      await otherGraph.invoke(say("later"), { ...thread, durability });
      release();
      expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
      expect((await s.info()).currentBranchId).toBe(fork);
      expect(sent).toEqual(["hi", "travel", "later"]);
      const expected = ["human:hi", "ai:drafted", "ai:booked", "human:travel", "ai:drafted", "ai:booked"];
      expect(texts((await graph.getState(thread)).values.messages)).toEqual([...expected, "human:later", "ai:drafted", "ai:booked"]);
    }, 30_000);

  it("another server's two rollbacks, each with a turn: the run stops; the turns and their calls stay", async () => {
    const { sent, graph, otherGraph, s, other, cp, hold } = await callMadeInFlight();
    const { running, release } = await hold();
    await other.rollback(cp.id);
    await otherGraph.invoke(say("there"), thread);
    const away = await other.rollback(cp.id);
    await otherGraph.invoke(say("again"), thread);
    release();
    expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
    expect((await s.info()).currentBranchId).toBe(away.branch.id);
    expect(sent).toEqual(["hi", "again"]);
    const expected = ["human:hi", "ai:drafted", "ai:booked", "human:again", "ai:drafted", "ai:booked"];
    expect(texts((await graph.getState(thread)).values.messages)).toEqual(expected);
  }, 30_000);

  it("another server's undo of the rollback the run went on from, then a turn: the run stops; the turn stays", async () => {
    const { sent, graph, otherGraph, s, other, cp, hold } = await callMadeInFlight();
    const home = (await s.info()).currentBranchId;
    await s.rollback(cp.id);
    await graph.invoke(say("two"), thread);
    const { running, release } = await hold();
    await other.undo();
    await otherGraph.invoke(say("back"), thread);
    release();
    expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
    expect((await s.info()).currentBranchId).toBe(home);
    expect(sent).toEqual(["hi", "one", "back"]);
    const expected = ["human:hi", "ai:drafted", "ai:booked", "human:one", "ai:drafted", "ai:booked"];
    expect(texts((await graph.getState(thread)).values.messages)).toEqual([...expected, "human:back", "ai:drafted", "ai:booked"]);
  }, 30_000);
});
