// A `Command` resume from a memory subgraph's wait found in the history, after a user's rollback away from it and a
// turn on the rollback's branch: the subgraph is served its wait there (it was served the other branch's finished
// turn, and the resume answered with that branch's answer). Its node's call then stops the run SESSION_MOVED, as
// with a plain subgraph: the session and the world stay where the user's turn left them.
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import { Command, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { say, sendTool } from "./helpers.js";

const dbs = tempDatabases();

/** A root graph whose one node runs a subgraph: it asks "ok?" on a text starting "ask", then sends the text. */
function askingGraph(saver: ForkpointSaver, memory: boolean) {
  const sub = new StateGraph(MessagesAnnotation)
    .addNode("inner", async (state) => {
      const text = String(state.messages.at(-1)!.content);
      const answer = text.startsWith("ask") ? `=${interrupt("ok?") as string}` : "";
      await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: text + answer });
      return { messages: [new AIMessage(`did ${text}${answer}`)] };
    })
    .addEdge(START, "inner")
    .addEdge("inner", END)
    .compile({ checkpointer: memory ? true : undefined });
  return new StateGraph(MessagesAnnotation)
    .addNode("sub", async (state) => {
      const out = await sub.invoke({ messages: [state.messages.at(-1) as BaseMessage] });
      return { messages: [out.messages.at(-1)!] };
    })
    .addEdge(START, "sub")
    .addEdge("sub", END)
    .compile({ checkpointer: saver });
}

for (const durability of ["async", "sync"] as const)
  for (const memory of [true, false])
    it(`a resume from a left ${memory ? "memory" : "plain"} subgraph wait after a rollback and a turn is stopped (${durability})`, async () => {
      const sent: string[] = [];
      const { fp } = dbs.open({ tools: [sendTool(sent)] });
      const saver = new ForkpointSaver(fp, { userId: "alice" });
      const graph = askingGraph(saver, memory);
      const config = { configurable: { thread_id: "t" }, durability };
      await graph.invoke(say("t1"), config);
      const s = await saver.sessionFor("t", { userId: "alice" });
      const afterT1 = await s.checkpoint({ name: "after t1" });
      await graph.invoke(say("ask2"), config);
      const waiting = await graph.getState(config);
      expect(waiting.tasks.flatMap((t) => t.interrupts.map((i) => i.value))).toEqual(["ok?"]);
      await s.rollback(afterT1.id);
      await graph.invoke(say("x"), config);

      await expect(graph.invoke(new Command({ resume: "yes" }), waiting.config)).rejects.toMatchObject({ code: "SESSION_MOVED" });
      const shown = (await graph.getState(config)).values.messages.map((m: BaseMessage) => m.content);
      expect(shown).toEqual(["t1", "did t1", "x", "did x"]);
      expect((await s.history()).map((m) => m.content)).toEqual(["t1", "did t1", "x", "did x"]);
      expect(sent).toEqual(["t1", "x"]);
    });
