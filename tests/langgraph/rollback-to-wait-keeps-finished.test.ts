// A rollback to a user's checkpoint taken while a step is stopped keeps its finished tasks, whatever came after.
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { sendTool } from "./helpers.js";

const dbs = tempDatabases();

const Log = Annotation.Root({ log: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }) });

const config = { configurable: { thread_id: "t" }, durability: "sync" as const };

/**
 * "charge" sends a charge and "ship" asks, side by side. Resumed, "ship" sends what it was told (a call in the step
 * that stopped, before the graph's next checkpoint). `fail`: "ship" throws instead of asking while it is set.
 */
function setup(options: { fail?: boolean } = {}) {
  const sent: string[] = [];
  const { fp } = dbs.open({ tools: [sendTool(sent)] });
  const saver = new ForkpointSaver(fp, { userId: "alice" });
  const runs = { charge: 0, ship: 0 };
  const flags = { fail: options.fail === true };
  const sessionOf = () => saver.sessionFor("t", { userId: "alice" });
  let charged!: () => void;
  const chargedOnce = new Promise<void>((resolve) => (charged = resolve));
  const graph = new StateGraph(Log)
    .addNode("plan", () => ({ log: ["plan"] }))
    .addNode("charge", async () => {
      const n = ++runs.charge;
      await (await sessionOf()).invoke("send", { t: `charge${n}` });
      charged();
      return { log: [`charged${n}`] };
    })
    .addNode("ship", async () => {
      runs.ship++;
      if (flags.fail) {
        await chargedOnce; // fails once "charge" has finished beside it
        await new Promise((resolve) => setImmediate(resolve));
        throw new Error("upstream down");
      }
      const answer = options.fail === true ? "retried" : (interrupt("ship?") as string);
      await (await sessionOf()).invoke("send", { t: `ship ${answer}` });
      return { log: [`ship ${answer}`] };
    })
    .addEdge(START, "plan")
    .addEdge("plan", "charge")
    .addEdge("plan", "ship")
    .addEdge("charge", END)
    .addEdge("ship", END)
    .compile({ checkpointer: saver });
  return { sent, saver, graph, runs, flags, sessionOf };
}

const interruptsOf = (state: { tasks: { interrupts: { value?: unknown }[] }[] }) =>
  state.tasks.flatMap((t) => t.interrupts).map((i) => i.value);

describe("a rollback to a user's checkpoint taken while a step is stopped", () => {
  it("keeps the finished task when the resumed task made a call before the graph's next checkpoint", async () => {
    const { sent, graph, runs, sessionOf } = setup();
    await graph.invoke({ log: ["start"] }, config);
    const s = await sessionOf();
    const waiting = await s.checkpoint({ name: "waiting" });
    await graph.invoke(new Command({ resume: "yes" }), config);
    expect(sent).toEqual(["charge1", "ship yes"]);
    await s.rollback(waiting.id);
    expect(sent).toEqual(["charge1"]);
    const state = await graph.getState(config);
    expect(state.next).toEqual(["ship"]);
    expect(interruptsOf(state)).toEqual(["ship?"]);
    expect(state.tasks.filter((t) => t.result !== undefined).map((t) => t.name)).toEqual(["charge"]);
    const out = await graph.invoke(new Command({ resume: "no" }), config);
    expect(out.log).toEqual(["start", "plan", "charged1", "ship no"]);
    expect(runs.charge).toBe(1);
    expect(sent).toEqual(["charge1", "ship no"]);
    expect((await s.toolTrack()).filter((c) => (c.args as { t: string }).t === "charge1")).toHaveLength(1);
  });

  it("keeps the finished task when the app made a call after the checkpoint", async () => {
    const { sent, graph, runs, sessionOf } = setup();
    await graph.invoke({ log: ["start"] }, config);
    const s = await sessionOf();
    const waiting = await s.checkpoint({ name: "waiting" });
    await s.invoke("send", { t: "later" });
    await s.rollback(waiting.id);
    expect(sent).toEqual(["charge1"]);
    expect((await graph.getState(config)).next).toEqual(["ship"]);
    const out = await graph.invoke(new Command({ resume: "yes" }), config);
    expect(out.log).toEqual(["start", "plan", "charged1", "ship yes"]);
    expect(runs.charge).toBe(1);
    expect(sent).toEqual(["charge1", "ship yes"]);
  });

  it("keeps the finished task of a step that failed, retried since", async () => {
    const { sent, graph, runs, flags, sessionOf } = setup({ fail: true });
    await expect(graph.invoke({ log: ["start"] }, config)).rejects.toThrow("upstream down");
    const s = await sessionOf();
    const failed = await s.checkpoint({ name: "after failure" });
    flags.fail = false;
    await graph.invoke(null, config);
    expect(sent).toEqual(["charge1", "ship retried"]);
    await s.rollback(failed.id);
    expect(sent).toEqual(["charge1"]);
    expect((await graph.getState(config)).next).toEqual(["ship"]);
    await graph.invoke(null, config);
    expect(runs.charge).toBe(1);
    expect(sent).toEqual(["charge1", "ship retried"]);
  });

  it("keeps it after a prune dropped the checkpoint the resumed step wrote", async () => {
    const { sent, saver, graph, runs, sessionOf } = setup();
    await graph.invoke({ log: ["start"] }, config);
    const s = await sessionOf();
    const waiting = await s.checkpoint({ name: "waiting" });
    await graph.invoke(new Command({ resume: "y1" }), config);
    await graph.invoke({ log: ["again"] }, config);
    await graph.invoke(new Command({ resume: "y2" }), config);
    expect(sent).toEqual(["charge1", "ship y1", "charge2", "ship y2"]);
    await saver.prune(["t"], { strategy: "keep_latest", userId: "alice" });
    await s.rollback(waiting.id);
    expect(sent).toEqual(["charge1"]);
    const state = await graph.getState(config);
    expect(state.next).toEqual(["ship"]);
    expect(state.tasks.filter((t) => t.result !== undefined).map((t) => t.name)).toEqual(["charge"]);
    await graph.invoke(new Command({ resume: "no" }), config);
    expect(runs.charge).toBe(2);
    expect(sent).toEqual(["charge1", "ship no"]);
  });

  it("a rollback to the graph's own checkpoint before the step still runs the finished task again", async () => {
    const { sent, graph, runs, sessionOf } = setup();
    await graph.invoke({ log: ["start"] }, config);
    const stopped = (await graph.getState(config)).config.configurable!.checkpoint_id as string;
    const s = await sessionOf();
    const lg = (await s.listCheckpoints({})).items.find(
      (c) => (c.metadata as { langgraph?: { checkpointId?: string } }).langgraph?.checkpointId === stopped,
    )!;
    await s.rollback(lg.id);
    expect(sent).toEqual([]);
    expect((await graph.getState(config)).next).toEqual(["charge", "ship"]);
    await graph.invoke(new Command({ resume: "yes" }), config);
    expect(runs.charge).toBe(2);
    expect([...sent].sort()).toEqual(["charge2", "ship yes"]); // side by side, in either order
  });
});
