// A run's input sent while another run of the thread is under way, read once that run's step stored its results
// (its call made) but before the step's put lands: the input starts a new step from the checkpoint, leaving those
// results out (LangGraph discards them), so its put forks before that call, which the thread's head never shows
// without its result: the other run's put is refused (`SESSION_MOVED`) and its call is undone.
import type { RunnableConfig } from "@langchain/core/runnables";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { latch, Log, outcome, sendTool } from "./helpers.js";

const dbs = tempDatabases();
const thread = { configurable: { thread_id: "t" }, durability: "async" as const };
const as = (submit: string) => ({ ...thread, configurable: { ...thread.configurable, submit } });

/**
 * A saver that lets a test hold a run's reads and puts (a run is named by its config's `submit` at its first read; a
 * put by the run's name, the put's source and its count, "A:loop:2").
 */
class GatedSaver extends ForkpointSaver {
  readonly names = new WeakMap<object, string>();
  beforeRead = new Map<string, () => Promise<void>>();
  afterRead = new Map<string, () => void>();
  beforePut = new Map<string, () => Promise<void>>();
  afterPut = new Map<string, () => void>();
  afterWrites = new Map<string, () => void>();
  readonly #puts = new Map<string, number>();
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
    const n = (this.#puts.get(`${name}:${args[2]?.source}`) ?? 0) + 1;
    this.#puts.set(`${name}:${args[2]?.source}`, n);
    const key = `${name}:${args[2]?.source}:${n}`;
    if (name) await this.beforePut.get(key)?.();
    const done = await super.put(...args);
    if (name) this.afterPut.get(key)?.();
    return done;
  }
  override async putWrites(...args: Parameters<ForkpointSaver["putWrites"]>) {
    await super.putWrites(...args);
    const name = this.#name(args[0]);
    if (name && args[1].some(([channel]) => channel === "log")) this.afterWrites.get(name)?.();
  }
}

describe("an input read after another run's step stored its results, before that step's put", () => {
  it("forks before that run's call and stops it, the head holding no result whose call is undone", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new GatedSaver(fp, { userId: "alice" });
    const St = Annotation.Root({ order: Annotation<string>(), log: Log.spec.log });
    const bInputLanded = latch();
    const call = async (t: string) => (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t });
    const graph = new StateGraph(St)
      .addNode("n1", async (state) => {
        await call(`${state.order}.1`);
        return { log: [`${state.order}.1`] };
      })
      .addNode("n2", async (state) => {
        if (state.order === "A") await bInputLanded.wait();
        await call(`${state.order}.2`);
        return { log: [`${state.order}.2`] };
      })
      .addEdge(START, "n1")
      .addEdge("n1", "n2")
      .addEdge("n2", END)
      .compile({ checkpointer: saver });
    await graph.invoke({ order: "T" }, thread);

    // A's "n1" calls and stores its results; B reads the thread then (A's call after the checkpoint it reads, its
    // results with it), before A's next put lands. That put lands next, then B's input; only then does A's "n2" call.
    const aWrote = latch();
    const bRead = latch();
    const aLanded = latch();
    saver.afterWrites.set("A", aWrote.open);
    saver.beforeRead.set("B", aWrote.wait);
    saver.afterRead.set("B", bRead.open);
    saver.beforePut.set("A:loop:2", bRead.wait);
    saver.afterPut.set("A:loop:2", aLanded.open);
    saver.beforePut.set("B:input:1", aLanded.wait);
    saver.afterPut.set("B:input:1", bInputLanded.open);
    const aRun = graph.invoke({ order: "A" }, as("A"));
    const bRun = graph.invoke({ order: "B" }, as("B"));
    const settled = await Promise.allSettled([aRun, bRun]);

    const head = (await graph.getState(thread)).values.log;
    expect(settled.map(outcome)).toEqual(["SESSION_MOVED", "ok"]);
    expect({ head, world: sent }).toEqual({ head: ["T.1", "T.2", "B.1", "B.2"], world: ["T.1", "T.2", "B.1", "B.2"] });
    const s = await saver.sessionFor("t", { userId: "alice" });
    expect((await s.toolTrack()).filter((c) => c.status === "succeeded").map((c) => (c.args as { t: string }).t)).toEqual([
      "T.1",
      "T.2",
      "B.1",
      "B.2",
    ]);
    expect((await fp.verify()).ok).toBe(true);
  });
});
