// Two runs of one thread at once, both inside a node that calls a tool through the thread's session: the thread's
// head never shows a state whose tool calls the world does not hold (or holds calls whose results it does not show).
// The run whose step lands first keeps its own calls; the other is stopped (`SESSION_MOVED`), its calls undone (or
// refused before they run, when they come after the first run's).
import { AIMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { Annotation, Command, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { latch, Log, outcome, sendTool } from "./helpers.js";

const dbs = tempDatabases();
const thread = { configurable: { thread_id: "t" }, durability: "sync" as const };

const Chat = Annotation.Root({ ...MessagesAnnotation.spec, log: Log.spec.log });

/**
 * A graph whose node "ship" asks (an interrupt), sends the answer (a forkpoint call) and logs it; `chat`: a message
 * too. `after` runs once the call is made or refused.
 */
function shipGraph(
  saver: ForkpointSaver,
  chat: boolean,
  hooks: { before: (a: string) => Promise<void>; after: (a: string) => Promise<void> },
) {
  const ship = async () => {
    const answer = interrupt("ship?") as string;
    await hooks.before(answer);
    try {
      await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: answer });
    } finally {
      // Run when the call is refused too.
      await hooks.after(answer);
    }
    return chat ? { log: [`ship ${answer}`], messages: [new AIMessage(`shipped ${answer}`)] } : { log: [`ship ${answer}`] };
  };
  return new StateGraph(chat ? Chat : Log)
    .addNode("ship", ship)
    .addEdge(START, "ship")
    .addEdge("ship", END)
    .compile({ checkpointer: saver });
}

describe.each([
  ["with a messages channel", true],
  ["without a messages channel", false],
])("two resumes of a waiting thread sent at once (%s)", (_, chat) => {
  it("keeps the calls of the run calling first and stops the other, its call refused", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    // Both runs are inside "ship" before either step's put lands; B's node calls once A's has called, and is refused
    // before its tool runs (its put would fork before A's call, undoing its own).
    const aCalled = latch();
    const bCalled = latch();
    let aRun: Promise<unknown> = Promise.resolve();
    const graph = shipGraph(saver, chat, {
      // B's node calls once A's has called.
      before: async (answer) => {
        if (answer === "B") await aCalled.wait();
      },
      // A's step waits for B's call; B's step for A's run to end (its put landed first).
      after: async (answer) => {
        if (answer === "A") {
          aCalled.open();
          await bCalled.wait();
        } else {
          bCalled.open();
          await aRun.catch(() => undefined);
        }
      },
    });
    await graph.invoke(chat ? { log: ["start"], messages: [{ role: "user", content: "ship it" }] } : { log: ["start"] }, thread);
    aRun = graph.invoke(new Command({ resume: "A" }), thread);
    const sendB = graph.invoke(new Command({ resume: "B" }), thread);
    const settled = await Promise.allSettled([aRun, sendB]);

    // The head shows A's result, and the world holds A's call alone.
    const state = await graph.getState(thread);
    expect({ head: state.values.log, world: sent }).toEqual({ head: ["start", "ship A"], world: ["A"] });
    const s = await saver.sessionFor("t", { userId: "alice" });
    expect((await s.toolTrack()).filter((c) => c.status === "succeeded").map((c) => (c.args as { t: string }).t)).toEqual(["A"]);
    expect((await fp.verify()).ok).toBe(true);
    // The other run was stopped.
    expect(settled.map(outcome)).toEqual(["ok", "SESSION_MOVED"]);
  });
});

/** A saver whose reads of a thread's head wait, once done, for the latch the config's `submit` names. */
class HeldSaver extends ForkpointSaver {
  holds = new Map<string, { read?: () => void; then: Promise<void> }>();
  override async getTuple(config: RunnableConfig) {
    const tuple = await super.getTuple(config);
    const hold = this.holds.get(String(config.configurable?.submit));
    if (hold) {
      hold.read?.();
      await hold.then;
    }
    return tuple;
  }
}

describe("two inputs of a thread without a messages channel sent at once", () => {
  it("stops the run overtaken by the other's input before its node's call runs", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new HeldSaver(fp, { userId: "alice" });
    const bInNode = latch();
    const St = Annotation.Root({ order: Annotation<string>(), log: Log.spec.log });
    const graph = new StateGraph(St)
      .addNode("place", async (state) => {
        // A's node calls once B's node is under way (B's input landed after A's).
        if (state.order === "A") await bInNode.wait();
        else if (state.order === "B") bInNode.open();
        await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: state.order });
        return { log: [`placed ${state.order}`] };
      })
      .addEdge(START, "place")
      .addEdge("place", END)
      .compile({ checkpointer: saver });
    await graph.invoke({ order: "first" }, thread);

    // Both runs read the thread's head before either input lands: each run's read returns once the other's is done
    // (a run whose read came back first would otherwise go on alone, and could end before the other's input lands).
    const aRead = latch();
    const bRead = latch();
    saver.holds.set("a", { read: aRead.open, then: bRead.wait() });
    saver.holds.set("b", { read: bRead.open, then: aRead.wait() });
    const aRun = graph.invoke({ order: "A" }, { ...thread, configurable: { ...thread.configurable, submit: "a" } });
    const bRun = graph.invoke({ order: "B" }, { ...thread, configurable: { ...thread.configurable, submit: "b" } });
    const settled = await Promise.allSettled([aRun, bRun]);

    // Which input lands last is the pooler's and the server's to order: one run is stopped, and the head shows the
    // other's order placed, the world holding its call alone (besides the first order's).
    const outcomes = settled.map(outcome);
    expect([...outcomes].sort()).toEqual(["SESSION_MOVED", "ok"]);
    const won = outcomes[0] === "ok" ? "A" : "B";
    const head = (await graph.getState(thread)).values.log;
    expect({ head, world: sent }).toEqual({ head: ["placed first", `placed ${won}`], world: ["first", won] });
    const s = await saver.sessionFor("t", { userId: "alice" });
    expect((await s.toolTrack()).filter((c) => c.status === "succeeded").map((c) => (c.args as { t: string }).t)).toEqual(["first", won]);
    expect((await fp.verify()).ok).toBe(true);
  });
});

/** A saver that lets a test hold each run's reads and puts (a run is named by its config's `submit` at its first read). */
class GatedSaver extends ForkpointSaver {
  readonly names = new WeakMap<object, string>();
  beforeRead = new Map<string, () => Promise<void>>();
  afterRead = new Map<string, () => void>();
  beforePut = new Map<string, () => Promise<void>>();
  afterPut = new Map<string, () => void>();
  afterWrites = new Map<string, () => void>();
  #name(config: RunnableConfig): string | undefined {
    const control = (config as { control?: object }).control;
    if (!control) return undefined;
    const submit = config.configurable?.submit;
    if (typeof submit === "string" && !this.names.has(control)) this.names.set(control, submit);
    return this.names.get(control);
  }
  override async getTuple(config: RunnableConfig) {
    const name = this.#name(config);
    if (name) await this.beforeRead.get(name)?.();
    const tuple = await super.getTuple(config);
    if (name) this.afterRead.get(name)?.();
    return tuple;
  }
  override async put(...args: Parameters<ForkpointSaver["put"]>) {
    const name = this.#name(args[0]);
    if (name && args[2]?.source === "loop") await this.beforePut.get(name)?.();
    const done = await super.put(...args);
    if (name && args[2]?.source === "loop") this.afterPut.get(name)?.();
    return done;
  }
  override async putWrites(...args: Parameters<ForkpointSaver["putWrites"]>) {
    await super.putWrites(...args);
    const name = this.#name(args[0]);
    if (name && args[1].some(([channel]) => channel === "log")) this.afterWrites.get(name)?.();
  }
}

describe("a resume served the other resume's step results", () => {
  it("keeps that step's call when its put forks past the other's", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new GatedSaver(fp, { userId: "alice" });
    const graph = shipGraph(saver, true, { before: async () => undefined, after: async () => undefined });
    await graph.invoke({ log: ["start"], messages: [{ role: "user", content: "ship it" }] }, thread);

    // B starts beside A, but reads the thread once A's step has run (its call made, its writes stored): B is served
    // them and does not run "ship" again. A's step lands next; then B's, a fork (its messages depart from A's).
    const aWrote = latch();
    const bRead = latch();
    const aLanded = latch();
    saver.afterWrites.set("a", aWrote.open);
    saver.beforeRead.set("b", aWrote.wait);
    saver.afterRead.set("b", bRead.open);
    saver.beforePut.set("a", bRead.wait);
    saver.afterPut.set("a", aLanded.open);
    saver.beforePut.set("b", aLanded.wait);
    const aRun = graph.invoke(new Command({ resume: "A" }), { ...thread, configurable: { ...thread.configurable, submit: "a" } });
    const bRun = graph.invoke(new Command({ resume: "B" }), { ...thread, configurable: { ...thread.configurable, submit: "b" } });
    const settled = await Promise.allSettled([aRun, bRun]);

    // The head shows A's result, and the world holds A's call.
    const state = await graph.getState(thread);
    expect({ head: state.values.log, world: sent }).toEqual({ head: ["start", "ship A"], world: ["A"] });
    const s = await saver.sessionFor("t", { userId: "alice" });
    expect((await s.toolTrack()).filter((c) => c.status === "succeeded").map((c) => (c.args as { t: string }).t)).toEqual(["A"]);
    expect((await fp.verify()).ok).toBe(true);
    expect(settled.map(outcome)).toEqual(["ok", "ok"]);
  });
});

describe('two resumes of a waiting thread sent at once under durability "exit"', () => {
  it("refuses the call of the run whose node calls once the other run's put has landed", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const exit = { ...thread, durability: "exit" as const };
    let aRun: Promise<unknown> = Promise.resolve();
    const aInNode = latch();
    // B's node calls once A's run has ended (its one put landed), A's once B's node is under way.
    const graph = shipGraph(saver, false, {
      before: async (answer) => {
        if (answer === "A") await aInNode.wait();
        else {
          aInNode.open();
          await aRun.catch(() => undefined);
        }
      },
      after: async () => undefined,
    });
    await graph.invoke({ log: ["start"] }, exit);
    aRun = graph.invoke(new Command({ resume: "A" }), exit);
    const bRun = graph.invoke(new Command({ resume: "B" }), exit);
    const settled = await Promise.allSettled([aRun, bRun]);

    const state = await graph.getState(exit);
    expect({ head: state.values.log, world: sent }).toEqual({ head: ["start", "ship A"], world: ["A"] });
    const s = await saver.sessionFor("t", { userId: "alice" });
    expect((await s.toolTrack()).map((c) => (c.args as { t: string }).t)).toEqual(["A"]);
    expect((await fp.verify()).ok).toBe(true);
    expect(settled.map(outcome)).toEqual(["ok", "SESSION_MOVED"]);
  });
});

describe("an input sent while another run's node is under way, its call made (no messages channel)", () => {
  it("forks before that call, which the new run's state does not hold", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const aCalled = latch();
    const bDone = latch();
    const St = Annotation.Root({ order: Annotation<string>(), log: Log.spec.log });
    const graph = new StateGraph(St)
      .addNode("place", async (state) => {
        await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: state.order });
        if (state.order === "A") {
          aCalled.open();
          await bDone.wait();
        }
        return { log: [`placed ${state.order}`] };
      })
      .addEdge(START, "place")
      .addEdge("place", END)
      .compile({ checkpointer: saver });
    await graph.invoke({ order: "first" }, thread);
    /** The orders the head shows placed, and the calls the world holds. */
    const seen = async () => {
      const head = ((await graph.getState(thread)).values.log as string[]).map((l) => l.slice("placed ".length));
      return { head, world: [...sent] };
    };

    // A's node has made its call when B is sent: B runs to its end, its input forking before A's call.
    const aRun = graph.invoke({ order: "A" }, thread);
    await aCalled.wait();
    await graph.invoke({ order: "B" }, thread);
    expect(await seen()).toEqual({ head: ["first", "B"], world: ["first", "B"] });
    // Then A's step lands, forking back after its own call (the last to land is the head).
    bDone.open();
    await aRun;
    expect(await seen()).toEqual({ head: ["first", "A"], world: ["first", "A"] });
    expect((await fp.verify()).ok).toBe(true);
  });
});
