// A forkpoint edit of a thread's first message: nothing is pending at the edited point, so `invoke(null)` gives the
// state back and does not take the run's old input again (its node's tool call with it).
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { say, sendTool, texts } from "./helpers.js";

const dbs = tempDatabases();

describe.each(["async", "sync"] as const)('a forkpoint edit of a thread\'s first message (durability "%s")', (durability) => {
  const config = { configurable: { thread_id: "t" }, durability };

  it("leaves nothing pending: invoke(null) runs no node; an input goes on after the edited message", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    let runs = 0;
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("bot", async (state) => {
        runs++;
        const asked = String(state.messages.at(-1)!.content);
        await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: asked });
        return { messages: [new AIMessage(`echo: ${asked}`)] };
      })
      .addEdge(START, "bot")
      .addEdge("bot", END)
      .compile({ checkpointer: saver });
    await graph.invoke(say("A"), config);
    await graph.invoke(say("B"), config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const first = (await s.history())[0]!;
    await s.edit(first.id, { content: "EDITED" });
    expect(sent).toEqual([]);
    const state = await graph.getState(config);
    expect(texts(state.values.messages)).toEqual(["human:EDITED"]);
    expect(state.next).toEqual([]);
    const before = runs;
    const out = await graph.invoke(null, config);
    expect(texts(out.messages)).toEqual(["human:EDITED"]);
    expect(runs).toBe(before);
    expect(sent).toEqual([]);
    const next = await graph.invoke(say("C"), config);
    expect(texts(next.messages)).toEqual(["human:EDITED", "human:C", "ai:echo: C"]);
    expect(sent).toEqual(["C"]);
    expect((await s.history()).map((m) => m.content)).toEqual(["EDITED", "C", "echo: C"]);
  });
});
