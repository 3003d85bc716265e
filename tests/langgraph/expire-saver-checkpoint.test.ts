// A thread's LangGraph checkpoints expired (`s.expire`, or imported expired) stay, as fork points do: `fp.prune()` passes
// over them instead of failing on them for the whole database, and the thread goes on.
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { echoGraph, texts } from "./helpers.js";

const dbs = tempDatabases();
const thread = { configurable: { thread_id: "t" } };

async function threadWithTwoTurns() {
  const { fp } = dbs.open();
  const saver = new ForkpointSaver(fp, { userId: "alice" });
  const graph = echoGraph(saver);
  await graph.invoke({ messages: [{ role: "user", content: "one" }] }, thread);
  await graph.invoke({ messages: [{ role: "user", content: "two" }] }, thread);
  const s = await saver.sessionFor("t", { userId: "alice" });
  const saved = (await s.listCheckpoints({ auto: true, limit: 100 })).items;
  return { fp, graph, s, saved };
}

describe("expiring a LangGraph checkpoint", () => {
  it("expired with s.expire, the thread's start too: prune keeps them, and the thread goes on", async () => {
    const { fp, graph, s, saved } = await threadWithTwoTurns();
    expect(saved.length).toBeGreaterThan(2);
    const mine = await s.checkpoint({ name: "mine" });
    for (const cp of [...saved, mine]) await s.expire(cp.id);
    // The user's own checkpoint goes; the saver's stay.
    expect((await fp.prune()).checkpoints).toBe(1);
    expect(texts((await graph.getState(thread)).values.messages)).toEqual(["human:one", "ai:echo: one", "human:two", "ai:echo: two"]);
    await graph.invoke({ messages: [{ role: "user", content: "three" }] }, thread);
    expect(texts((await graph.getState(thread)).values.messages).slice(-2)).toEqual(["human:three", "ai:echo: three"]);
    expect((await fp.verify()).ok).toBe(true);
  });
  it("expired, a checkpoint the thread's history lists is still one to travel back to", async () => {
    const { graph, s, saved } = await threadWithTwoTurns();
    for (const cp of saved) await s.expire(cp.id);
    const history = [];
    for await (const state of graph.getStateHistory(thread)) history.push(state);
    const first = history.find((state) => texts(state.values.messages ?? []).join() === "human:one,ai:echo: one")!;
    await graph.invoke({ messages: [{ role: "user", content: "again" }] }, first.config);
    expect(texts((await graph.getState(thread)).values.messages)).toEqual(["human:one", "ai:echo: one", "human:again", "ai:echo: again"]);
  });
});
