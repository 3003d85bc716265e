// Time travel under durability "exit" from the checkpoint a user's rollback left, with nothing since: the run forks
// there, as it does under "async" (it was refused SESSION_MOVED as a run overtaken by that rollback, which came before
// it). A rollback made while such a run is under way still stops it, leaving the session where the user moved it.
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { latch, say } from "./helpers.js";

const dbs = tempDatabases();

/** A chat graph whose bot answers "did <last message>", waiting for `gate` when it is set. */
function setup() {
  const { fp } = dbs.open();
  const saver = new ForkpointSaver(fp, { userId: "alice" });
  const held: { gate: Promise<void> | null; entered: () => void } = { gate: null, entered: () => undefined };
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("bot", async (state) => {
      if (held.gate) {
        held.entered();
        await held.gate;
      }
      return { messages: [new AIMessage(`did ${String(state.messages.at(-1)!.content)}`)] };
    })
    .addEdge(START, "bot")
    .addEdge("bot", END)
    .compile({ checkpointer: saver });
  const config = { configurable: { thread_id: "t" } };
  const contents = async () => (await graph.getState(config)).values.messages.map((m: { content: unknown }) => m.content);
  return { saver, graph, config, held, contents };
}

/** Turns t1, t2, t3, a user checkpoint after t1 and t2, and LangGraph's checkpoints after each turn (its history). */
async function threeTurns(ctx: ReturnType<typeof setup>) {
  const { saver, graph, config } = ctx;
  await graph.invoke(say("t1"), { ...config, durability: "sync" });
  const s = await saver.sessionFor("t", { userId: "alice" });
  const afterT1 = await s.checkpoint({ name: "after t1" });
  await graph.invoke(say("t2"), { ...config, durability: "sync" });
  const afterT2 = await s.checkpoint({ name: "after t2" });
  await graph.invoke(say("t3"), { ...config, durability: "sync" });
  const history: Awaited<ReturnType<typeof graph.getState>>[] = [];
  for await (const state of graph.getStateHistory(config)) history.push(state);
  const atTurnEnd = (n: number) => history.find((h) => h.values.messages?.length === n && h.next.length === 0)!;
  return { s, afterT1, afterT2, t1End: atTurnEnd(2), t3End: atTurnEnd(6) };
}

it('an "exit" time travel from the point a rollback left, nothing since, forks there', async () => {
  const ctx = setup();
  const { graph, contents } = ctx;
  const { s, afterT1, t3End } = await threeTurns(ctx);
  await s.rollback(afterT1.id);

  await graph.invoke(say("v"), { ...t3End.config, durability: "exit" });
  const forked = ["t1", "did t1", "t2", "did t2", "t3", "did t3", "v", "did v"];
  expect(await contents()).toEqual(forked);
  expect((await s.history()).map((m) => m.content)).toEqual(forked);
  expect(await s.branches()).toHaveLength(3);
});

for (const before of ["none", "rollback"] as const)
  it(`an "exit" time travel overtaken by a rollback made while it runs is stopped (moved before: ${before})`, async () => {
    const ctx = setup();
    const { graph, held, contents } = ctx;
    const { s, afterT1, afterT2, t1End, t3End } = await threeTurns(ctx);
    if (before === "rollback") await s.rollback(afterT1.id);
    const entered = latch();
    const gate = latch();
    held.gate = gate.wait();
    held.entered = entered.open;

    const run = graph.invoke(say("v"), { ...(before === "none" ? t1End : t3End).config, durability: "exit" });
    await entered.wait();
    await s.rollback(afterT2.id);
    const shown = await contents();
    gate.open();
    await expect(run).rejects.toMatchObject({ code: "SESSION_MOVED" });
    expect(await contents()).toEqual(shown);
    expect((await s.history()).map((m) => m.content)).toEqual(["t1", "did t1", "t2", "did t2"]);
  });
