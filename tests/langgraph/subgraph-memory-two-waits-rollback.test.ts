// A `checkpointer: true` subgraph waiting on two tasks side by side, one answered, then rolled back to the wait: both ask.
import { Annotation, Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { sendTool } from "./helpers.js";

const dbs = tempDatabases();

const State = Annotation.Root({ a: Annotation<string>(), b: Annotation<string>() });

/**
 * Thread "t": the memory subgraph "sub" asks "A?" in "qa" and "B?" in "qb" side by side, each sending its answer; the
 * parent's "act" sends both once the subgraph finished. Checkpoint W (a user's, one more taken after it and deleted,
 * or LangGraph's own of the step) at the wait, "A1" answered, a rollback to W, then "A2" and "B2" answered: what
 * the subgraph asks after the rollback, what each call sent, and what is sent at the end.
 */
async function rolledBack(at: "user" | "deleted-newest" | "langgraph", durability: "async" | "sync" | "exit") {
  const sent: string[] = [];
  const { fp } = dbs.open({ tools: [sendTool(sent)] });
  const saver = new ForkpointSaver(fp, { userId: "alice" });
  const send = async (t: string) => (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t });
  const calls: string[] = [];
  const ask = (key: "a" | "b") => async () => {
    const v = interrupt(`${key.toUpperCase()}?`) as string;
    calls.push(`${key}=${v}`);
    await send(`${key}=${v}`);
    return { [key]: v };
  };
  const sub = new StateGraph(State)
    .addNode("plan", () => ({}))
    .addNode("qa", ask("a"))
    .addNode("qb", ask("b"))
    .addEdge(START, "plan")
    .addEdge("plan", "qa")
    .addEdge("plan", "qb")
    .addEdge("qa", END)
    .addEdge("qb", END)
    .compile({ checkpointer: true });
  const graph = new StateGraph(State)
    .addNode("sub", sub)
    .addNode("act", async (s) => {
      await send(`act ${s.a}/${s.b}`);
      return {};
    })
    .addEdge(START, "sub")
    .addEdge("sub", "act")
    .addEdge("act", END)
    .compile({ checkpointer: saver });
  const config = { configurable: { thread_id: "t" }, durability };
  const answer = async (question: string, value: string) => {
    const interrupts = (await graph.getState(config)).tasks.flatMap((t) => t.interrupts);
    const id = interrupts.find((i) => i.value === question)!.id!;
    await graph.invoke(new Command({ resume: { [id]: value } }), config);
  };
  const asked = async () => {
    const sub = (await graph.getState(config, { subgraphs: true })).tasks[0]?.state as { next: string[] } | undefined;
    return [...(sub?.next ?? [])].sort();
  };
  await graph.invoke({}, config);
  const s = await saver.sessionFor("t", { userId: "alice" });
  const stepId = (await graph.getState(config)).config.configurable!.checkpoint_id as string;
  let w = await s.checkpoint({ name: "W" });
  const newest = at === "deleted-newest" ? await s.checkpoint({ name: "newest" }) : undefined;
  await answer("A?", "A1");
  expect(sent).toEqual(["a=A1"]);
  if (newest) await s.deleteCheckpoint(newest.id);
  if (at === "langgraph") {
    w = (await s.listCheckpoints({})).items.find(
      (c) => (c.metadata as { langgraph?: { checkpointId?: string } } | null)?.langgraph?.checkpointId === stepId,
    )!;
  }
  await s.rollback(w.id);
  const afterRollback = { asked: await asked(), sent: [...sent] };
  await answer("A?", "A2");
  await answer("B?", "B2");
  return { afterRollback, calls, sent };
}

describe("a checkpointer: true subgraph with two waits side by side, one answered, rolled back to the wait", () => {
  for (const at of ["user", "deleted-newest", "langgraph"] as const) {
    it(`asks both again and runs each with its new answer (checkpoint: ${at})`, async () => {
      for (const durability of ["async", "sync", "exit"] as const) {
        expect([durability, await rolledBack(at, durability)]).toEqual([
          durability,
          { afterRollback: { asked: ["qa", "qb"], sent: [] }, calls: ["a=A1", "a=A2", "b=B2"], sent: ["a=A2", "b=B2", "act A2/B2"] },
        ]);
      }
    });
  }
});
