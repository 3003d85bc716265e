// Pins a defect: LangGraph runs a step's nodes while the step's input put is still under way, so a tool call a node
// journals through the thread's session lands before the input message that caused it (here, always, on both stores).
// A forkpoint edit of that message forks just before it, after the call: the call it caused stays applied, and its
// effect stays in the world, on a branch whose question never asked for it.
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { SessionHandle } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { appendLineTool, readOrNull, tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";
import { say } from "./helpers.js";

const dbs = tempDatabases();
const thread = { configurable: { thread_id: "t" } };

describe("a forkpoint edit of a LangGraph input message", () => {
  it.fails("undoes the tool calls the graph's nodes made in answer to it", async () => {
    const { fp } = dbs.open({ tools: [appendLineTool()] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const log = path.join(tempDir(), "log");
    let s: SessionHandle | undefined;
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("act", async (state) => {
        s ??= await saver.sessionFor("t", { userId: "alice" });
        await s.invoke("append_line", { path: log, line: String(state.messages.at(-1)!.content) });
        return { messages: [new AIMessage("done")] };
      })
      .addEdge(START, "act")
      .addEdge("act", END)
      .compile({ checkpointer: saver });
    await graph.invoke(say("one"), thread);
    await graph.invoke(say("two"), thread);
    expect(readOrNull(log)).toBe("one\ntwo\n");
    const session = await saver.sessionFor("t", { userId: "alice" });
    const two = (await session.history()).find((m) => m.content === "two")!;
    const call = (await session.toolTrack()).find((t) => (t.args as { line: string }).line === "two")!;

    const edited = await session.edit(two.id, { content: "not two" });
    expect(edited.undone.map((t) => t.id)).toEqual([call.id]);
    expect(readOrNull(log)).toBe("one\n");
  });
});
