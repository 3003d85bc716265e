// A run under durability "exit" started after a rollback, with nobody moving the thread meanwhile, whose node records a
// tool call through the thread's session: the call is the run's own, so its one put goes on after it (it was refused as
// overtaken, SESSION_MOVED, leaving the call applied on a branch without the run's messages).
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { sendTool } from "./helpers.js";

const dbs = tempDatabases();

for (const durability of ["exit", "sync"] as const)
  it(`a "${durability}" run after a rollback whose node records a call finishes with the call on its own branch`, async () => {
    const sent: string[] = [];
    const send = sendTool(sent);
    const { fp } = dbs.open({ tools: [send] });
    const saver = new ForkpointSaver(fp, { userId: "a" });
    let calls = false;
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("tool", async () => {
        if (calls) await (await saver.sessionFor("t", { userId: "a" })).invoke("send", { t: "x" });
        return { messages: [new AIMessage("done")] };
      })
      .addEdge(START, "tool")
      .compile({ checkpointer: saver });
    const config = { configurable: { thread_id: "t" } };
    await graph.invoke({ messages: [new HumanMessage("hi")] }, config);
    const s = await saver.sessionFor("t", { userId: "a" });
    const cp = await s.checkpoint({ name: "after hi" });
    await graph.invoke({ messages: [new HumanMessage("yo")] }, config);
    await s.rollback(cp.id);

    calls = true;
    await graph.invoke({ messages: [new HumanMessage("again")] }, { ...config, durability });
    expect((await s.history()).map((m) => m.content)).toEqual(["hi", "done", "again", "done"]);
    expect((await s.toolTrack()).map((t) => [t.tool, t.applied])).toEqual([["send", true]]);
    expect(sent).toEqual(["x"]);
    const state = await graph.getState(config);
    expect(state.values.messages.map((m: { content: unknown }) => m.content)).toEqual(["hi", "done", "again", "done"]);
  });
