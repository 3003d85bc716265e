// A graph node's tool call through `sessionFor`, made after another server rolled the thread back mid-run (durability
// "sync" or "async"): the run's next put is refused (SESSION_MOVED), so the call is refused first, before anything is
// recorded or run; it would otherwise land on the rollback's branch, without the message it answers.
import { AIMessage } from "@langchain/core/messages";
import { RunnableLambda } from "@langchain/core/runnables";
import { MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import { describe, expect, it } from "vitest";
import { ConflictError, type SessionHandle } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { aroundWrites } from "../fixtures/around-writes.js";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { LandingSaver, latch, say, sendTool } from "./helpers.js";

const dbs = tempDatabases();

describe.each(["sync", "async"] as const)("a node's call after another server's rollback (durability \"%s\")", (durability) => {
  const config = { configurable: { thread_id: "t" }, durability };

  /**
   * A thread with one whole run and a user's checkpoint after it; a second run whose node makes `before` calls, then
   * waits for `gate`, then makes one more (its outcome kept in `refusal`, null when it went through).
   */
  async function runInFlight(before: number) {
    const sent: string[] = [];
    const send = sendTool(sent);
    const { fp, path } = dbs.open({ tools: [send] });
    const saver = new LandingSaver(fp, { userId: "alice" });
    let armed = false;
    const gate = latch();
    const waiting = latch();
    let refusal: unknown = null;
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("tool", async (state) => {
        if (armed) {
          const s = await saver.sessionFor("t", { userId: "alice" });
          const asked = String(state.messages.at(-1)!.content);
          for (let i = 0; i < before; i++) await s.invoke("send", { t: `${asked} ${i}` });
          waiting.open();
          await gate.wait();
          refusal = await s.invoke("send", { t: `${asked} last` }).then(
            () => null,
            (error: unknown) => error,
          );
        }
        return { messages: [new AIMessage("done")] };
      })
      .addEdge(START, "tool")
      .compile({ checkpointer: saver });
    await graph.invoke(say("hi"), config);
    const s: SessionHandle = await saver.sessionFor("t", { userId: "alice" });
    const cp = await s.checkpoint({ name: "after hi" });
    armed = true;
    const running = graph.invoke(say("email bob"), config);
    running.catch(() => undefined);
    await waiting.wait();
    // The run's step checkpoint (with "email bob") is stored before the node's call asks for it.
    await saver.settledWith(3);
    expect((await s.history()).map((m) => m.content)).toEqual(["hi", "done", "email bob"]);
    return { fp, path, send, s, cp, sent, running, release: () => gate.open(), refusal: () => refusal, graph };
  }

  it("is refused with SESSION_MOVED before it is recorded or run; the run stops; neither branch has it", async () => {
    const { path, send, s, cp, sent, running, release, refusal } = await runInFlight(0);
    const runBranch = (await s.info()).currentBranchId;
    const other = dbs.open({ path, tools: [send] }).fp;
    const moved = await (await other.getSession(s.id, { userId: "alice" })).rollback(cp.id);
    release();
    expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
    expect(refusal()).toBeInstanceOf(ConflictError);
    expect(refusal()).toMatchObject({ code: "SESSION_MOVED" });
    expect(sent).toEqual([]);
    expect((await s.info()).currentBranchId).toBe(moved.branch.id);
    expect((await s.history()).map((m) => m.content)).toEqual(["hi", "done"]);
    expect(await s.toolTrack()).toEqual([]);
    await s.switchBranch(runBranch);
    expect(await s.toolTrack()).toEqual([]);
    expect(sent).toEqual([]);
  }, 30_000);

  it("after a call of its own: the next one is refused; the first stays on the run's branch only", async () => {
    const { path, send, s, cp, sent, running, release, refusal } = await runInFlight(1);
    const runBranch = (await s.info()).currentBranchId;
    const other = dbs.open({ path, tools: [send] }).fp;
    await (await other.getSession(s.id, { userId: "alice" })).rollback(cp.id);
    expect(sent).toEqual([]); // the rollback undid the first call
    release();
    expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
    expect(refusal()).toMatchObject({ code: "SESSION_MOVED" });
    expect(sent).toEqual([]);
    expect(await s.toolTrack()).toEqual([]);
    await s.switchBranch(runBranch);
    expect((await s.toolTrack()).map((t) => [(t.args as { t: string }).t, t.applied])).toEqual([["email bob 0", true]]);
    expect(sent).toEqual(["email bob 0"]);
  }, 30_000);

  it("a rollback landing between the call's checks and its journal refuses it too", async () => {
    const { fp, path, send, s, cp, sent, running, release, refusal } = await runInFlight(0);
    const other = dbs.open({ path, tools: [send] }).fp;
    let moved: Awaited<ReturnType<SessionHandle["rollback"]>> | undefined;
    // The call's first write is its journal, its checks read by then: the other server moves right here.
    aroundWrites(fp, "before", async () => {
      moved = await (await other.getSession(s.id, { userId: "alice" })).rollback(cp.id);
      return true;
    });
    release();
    expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
    expect(refusal()).toMatchObject({ code: "SESSION_MOVED" });
    expect(sent).toEqual([]);
    expect((await s.info()).currentBranchId).toBe(moved!.branch.id);
    expect(await s.toolTrack()).toEqual([]);
  }, 30_000);

  it("nobody moved the thread: the call is recorded and run, and the run finishes", async () => {
    const { s, sent, running, release, refusal } = await runInFlight(0);
    release();
    await running;
    expect(refusal()).toBeNull();
    expect(sent).toEqual(["email bob last"]);
    expect((await s.toolTrack()).map((t) => [(t.args as { t: string }).t, t.applied])).toEqual([["email bob last", true]]);
    expect((await s.history()).map((m) => m.content)).toEqual(["hi", "done", "email bob", "done"]);
  }, 30_000);
});

/** A serializer that holds the metadata of puts of the sources in `sources` while `hold` is set. */
class HeldSerializer extends JsonPlusSerializer {
  hold: Promise<void> | null = null;
  sources: unknown[] = [];
  override async dumpsTyped(value: unknown): Promise<[string, Uint8Array]> {
    if (this.hold && this.sources.includes((value as { source?: unknown } | null)?.source)) await this.hold;
    return super.dumpsTyped(value);
  }
}

// Held: the step's put (with the run's input message); or the input's put too, and LangGraph, that put refused, issues
// no more of the run's puts.
describe.each([[["loop"]], [["input", "loop"]]])(
  "a node's call after a rollback that lands before the run's puts of %j (durability \"async\")",
  (sources) => {
    it("is refused with SESSION_MOVED, as the run's put is, before it is recorded or run; the next run's calls go on", async () => {
      const sent: string[] = [];
      const send = sendTool(sent);
      const { fp, path } = dbs.open({ tools: [send] });
      const serde = new HeldSerializer();
      serde.sources = sources;
      const saver = new ForkpointSaver(fp, { userId: "alice", serde });
      const config = { configurable: { thread_id: "t" }, durability: "async" as const };
      let armed = false;
      const reached = latch();
      let refusal: unknown = "not called";
      let calls = 0;
      const graph = new StateGraph(MessagesAnnotation)
        .addNode("tool", async () => {
          if (armed) {
            reached.open();
            // Waits for the thread's puts still landing: the held one, refused once it lands.
            const s = await saver.sessionFor("t", { userId: "alice" });
            // As a LangChain tool runs it: a child runnable, whose config does not carry the run's durability.
            const call = RunnableLambda.from(() => s.invoke("send", { t: `x${calls++}` }));
            refusal = await call.invoke(null).then(
              () => null,
              (error: unknown) => error,
            );
          }
          return { messages: [new AIMessage("done")] };
        })
        .addEdge(START, "tool")
        .compile({ checkpointer: saver });
      await graph.invoke(say("hi"), config);
      const s = await saver.sessionFor("t", { userId: "alice" });
      const cp = await s.checkpoint({ name: "after hi" });
      await graph.invoke(say("yo"), config);
      const held = latch();
      serde.hold = held.wait();
      armed = true;
      const running = graph.invoke(say("email bob"), config);
      running.catch(() => undefined);
      await reached.wait(); // the node runs while its step's put (with "email bob") is held
      const other = dbs.open({ path, tools: [send] }).fp;
      const moved = await (await other.getSession(s.id, { userId: "alice" })).rollback(cp.id);
      held.open();
      expect(await rejectionOf(running)).toMatchObject({ code: "SESSION_MOVED" });
      expect(refusal).toBeInstanceOf(ConflictError);
      expect(refusal).toMatchObject({ code: "SESSION_MOVED" });
      expect(sent).toEqual([]);
      expect((await s.info()).currentBranchId).toBe(moved.branch.id);
      expect((await s.history()).map((m) => m.content)).toEqual(["hi", "done"]);
      expect(await s.toolTrack()).toEqual([]);
      // The next run's node, under "exit" (its checkpoints are not stored while it runs), records its call: the
      // stopped run's refusal is not the next run's. (Its one put's outcome is not this test's subject.)
      serde.hold = null;
      await graph.invoke(say("again"), { ...config, durability: "exit" }).catch(() => undefined);
      expect(refusal).toBeNull();
      expect(sent).toEqual(["x1"]);
    }, 30_000);
  },
);
