// DeltaChannels (LangGraph 1.7's DeltaValue, MessagesDeltaValue) on ForkpointSaver: rebuilt from the pending writes on
// the path to a checkpoint (`getDeltaChannelHistory`), also where forkpoint itself moved the thread's head.
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { DeltaValue, END, MessagesDeltaValue, MessagesValue, ReducedValue, START, StateGraph, StateSchema } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ValidationError } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { say, texts } from "./helpers.js";

const dbs = tempDatabases();
const thread = (id: string) => ({ configurable: { thread_id: id } });

/** A chat graph whose bot also logs what it saw, in `log`: a DeltaChannel, or a channel with a reducer. */
function loggingGraph(saver: ForkpointSaver, kind: "delta" | "reduced") {
  const items = z.array(z.string()).default(() => []);
  const log =
    kind === "delta"
      ? new DeltaValue(items, { inputSchema: z.string(), reducer: (current: string[], writes: string[]) => [...current, ...writes] })
      : new ReducedValue(items, { inputSchema: z.string(), reducer: (current: string[], write: string) => [...current, write] });
  return new StateGraph(new StateSchema({ messages: MessagesValue, log }))
    .addNode("bot", (state) => ({
      messages: [new AIMessage(`echo: ${String(state.messages.at(-1)!.content)}`)],
      log: `bot saw ${state.messages.length}`,
    }))
    .addEdge(START, "bot")
    .addEdge("bot", END)
    .compile({ checkpointer: saver });
}

describe("DeltaChannels on ForkpointSaver", () => {
  it("after a forkpoint edit, a DeltaChannel reads as a channel with a reducer does: the edited-away step's write is undone", async () => {
    const logs: Record<string, unknown> = {};
    for (const kind of ["delta", "reduced"] as const) {
      const { fp } = dbs.open();
      const saver = new ForkpointSaver(fp);
      const graph = loggingGraph(saver, kind);
      await graph.invoke(say("one"), thread("t"));
      await graph.invoke(say("two"), thread("t"));
      const s = await saver.sessionFor("t");
      const answer = (await s.history()).find((m) => m.content === "echo: two")!;
      // The head is now a point no LangGraph checkpoint marks: built on the checkpoint before the bot answered "two".
      await s.edit(answer.id, { role: "assistant", content: "edited" });
      if (kind === "delta") {
        const history = await saver.getDeltaChannelHistory({ config: thread("t"), channels: ["log"] });
        expect(history.log!.writes.map(([, , value]) => value)).toEqual(["bot saw 1"]);
        expect(history.log!.seed).toBeUndefined();
      }
      const out = await graph.invoke(say("three"), thread("t"));
      expect(texts(out.messages)).toEqual(["human:one", "ai:echo: one", "human:two", "ai:edited", "human:three", "ai:echo: three"]);
      logs[kind] = out.log;
    }
    expect(logs.delta).toEqual(["bot saw 1", "bot saw 5"]);
    expect(logs.delta).toEqual(logs.reduced);
  });

  it("a thread whose messages are LangGraph's deltas (MessagesDeltaValue) keeps its conversation after a forkpoint state change", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const graph = new StateGraph(new StateSchema({ messages: MessagesDeltaValue }))
      .addNode("bot", (state) => ({ messages: [new AIMessage(`echo: ${String(state.messages.at(-1)!.content)}`)] }))
      .addEdge(START, "bot")
      .addEdge("bot", END)
      .compile({ checkpointer: saver });
    await graph.invoke({ messages: [new HumanMessage("one")] }, thread("d"));
    // The session holds none of those messages (LangGraph keeps them as deltas): its head moves past the graph's.
    await (await saver.sessionFor("d")).setState({ note: 1 });
    const out = await graph.invoke({ messages: [new HumanMessage("two")] }, thread("d"));
    expect(texts(out.messages)).toEqual(["human:one", "ai:echo: one", "human:two", "ai:echo: two"]);
  });

  it("walks as the base class does: nothing for no channels, empty histories for an unknown thread, typed errors for bad options", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp);
    expect(await saver.getDeltaChannelHistory({ config: thread("nope"), channels: [] })).toEqual({});
    expect(await saver.getDeltaChannelHistory({ config: thread("nope"), channels: ["log", "x"] })).toEqual({
      log: { writes: [] },
      x: { writes: [] },
    });
    await expect(saver.getDeltaChannelHistory(null as never)).rejects.toBeInstanceOf(ValidationError);
    await expect(saver.getDeltaChannelHistory({ config: thread("t"), channels: "log" as never })).rejects.toMatchObject({
      field: "options.channels",
    });
    await expect(saver.getDeltaChannelHistory({ config: null as never, channels: ["log"] })).rejects.toMatchObject({
      field: "options.config",
    });
  });
});
