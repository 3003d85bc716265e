// Time travel under durability "exit" over a thread whose last run, also under "exit", recorded its calls before its
// messages. A run refused for its node's call (SESSION_MOVED) leaves the thread as it was (its put at its end moved the
// session onto its fork, keeping the calls of the turn it left); one that calls nothing forks there and undoes that
// turn's calls (its fork went on after them, so they stayed applied under a conversation without them).
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { sendTool, say, texts } from "./helpers.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const thread = { configurable: { thread_id: "t" } };

/** Turns "one" (sync) and "two" (exit), each node's call sending its turn's text; the config of the state after "one". */
async function twoTurns() {
  const sent: string[] = [];
  const { fp } = dbs.open({ tools: [sendTool(sent)] });
  const saver = new ForkpointSaver(fp, { userId: "alice" });
  const quiet = new Set<string>();
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("act", async (state) => {
      const text = String(state.messages.at(-1)!.content);
      if (!quiet.has(text)) await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: text });
      return { messages: [new AIMessage(`did ${text}`)] };
    })
    .addEdge(START, "act")
    .addEdge("act", END)
    .compile({ checkpointer: saver });
  await graph.invoke(say("one"), { ...thread, durability: "sync" });
  await graph.invoke(say("two"), { ...thread, durability: "exit" });
  const states = [];
  for await (const st of graph.getStateHistory(thread)) states.push(st);
  const afterOne = states.find((st) => texts(st.values.messages ?? []).join("|") === "human:one|ai:did one")!;
  const s = await saver.sessionFor("t", { userId: "alice" });
  return { sent, saver, graph, afterOne, s, quiet };
}

describe('time travel under durability "exit" after an "exit" turn with calls', () => {
  it("a run refused for its node's call leaves the session, its branch and the calls as they were", async () => {
    const { sent, saver, graph, afterOne, s } = await twoTurns();
    const before = await s.info();
    const run = graph.invoke(say("three"), { ...afterOne.config, durability: "exit" });
    await expect(run).rejects.toMatchObject({ code: "SESSION_MOVED" });
    // Its put at the end is not awaited by the invoke: a read of the thread waits for it.
    await graph.getState(thread);
    await saver.sessionFor("t", { userId: "alice" });
    expect((await s.info()).currentBranchId).toBe(before.currentBranchId);
    expect(await s.branches()).toHaveLength(1);
    expect((await s.history()).map((m) => m.content)).toEqual(["one", "did one", "two", "did two"]);
    expect((await s.toolTrack()).map((t) => [(t.args as { t: string }).t, t.applied])).toEqual([
      ["one", true],
      ["two", true],
    ]);
    expect(sent).toEqual(["one", "two"]);
    const state = await graph.getState(thread);
    expect(texts(state.values.messages)).toEqual(["human:one", "ai:did one", "human:two", "ai:did two"]);
  });

  it("a run that calls nothing forks at the older checkpoint, undoing the later turn's calls", async () => {
    const { sent, graph, afterOne, s, quiet } = await twoTurns();
    quiet.add("three");
    const out = await graph.invoke(say("three"), { ...afterOne.config, durability: "exit" });
    expect(texts(out.messages)).toEqual(["human:one", "ai:did one", "human:three", "ai:did three"]);
    expect((await s.history()).map((m) => m.content)).toEqual(["one", "did one", "three", "did three"]);
    expect((await s.toolTrack()).map((t) => [(t.args as { t: string }).t, t.applied])).toEqual([["one", true]]);
    expect(sent).toEqual(["one"]);
  });
});
