// A `Command` resume from a subgraph's wait found in `getStateHistory` after a user's rollback left it (no turn since):
// the subgraph node's call comes before the run's first put, which forks there, so it is refused before it runs
// (SESSION_MOVED) and nothing stays applied, as a root node's call is.
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { Command, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { sendTool, texts } from "./helpers.js";

const dbs = tempDatabases();
const thread = { configurable: { thread_id: "t" }, durability: "sync" as const };

describe("a resume from a subgraph's wait a user's rollback left", () => {
  it.each([false, true])(
    "is refused before its call runs (memory subgraph: %s)",
    async (memory) => {
      const sent: string[] = [];
      const { fp } = dbs.open({ tools: [sendTool(sent)] });
      const saver = new ForkpointSaver(fp, { userId: "alice" });
      const sub = new StateGraph(MessagesAnnotation)
        .addNode("inner", async (state) => {
          const text = String(state.messages.at(-1)!.content);
          const answer = text.startsWith("ask") ? `=${String(interrupt("ok?"))}` : "";
          await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: text + answer });
          return { messages: [new AIMessage(`did ${text}${answer}`)] };
        })
        .addEdge(START, "inner")
        .addEdge("inner", END)
        .compile(memory ? { checkpointer: true } : {});
      const graph = new StateGraph(MessagesAnnotation)
        .addNode("sub", async (state) => {
          const out = await sub.invoke({ messages: [state.messages.at(-1)!] });
          return { messages: [out.messages.at(-1)!] };
        })
        .addEdge(START, "sub")
        .addEdge("sub", END)
        .compile({ checkpointer: saver });
      await graph.invoke({ messages: [new HumanMessage("t1")] }, thread);
      const s = await saver.sessionFor("t", { userId: "alice" });
      const before = await s.checkpoint({ name: "before" });
      await graph.invoke({ messages: [new HumanMessage("ask2")] }, thread);
      const waiting = await graph.getState(thread);
      await s.rollback(before.id);
      const run = graph.invoke(new Command({ resume: "yes" }), { ...waiting.config, durability: "sync" });
      expect(await rejectionOf(run)).toMatchObject({ code: "SESSION_MOVED" });
      expect(sent).toEqual(["t1"]);
      expect((await s.toolTrack()).filter((t) => t.applied).map((t) => (t.args as { t: string }).t)).toEqual(["t1"]);
      expect(texts((await graph.getState(thread)).values.messages)).toEqual(["human:t1", "ai:did t1"]);
    },
    30_000,
  );
});
