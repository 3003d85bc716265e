// A tool call a LangGraph node journals through its thread's session lands after the input message that caused it,
// although LangGraph runs the step's nodes while that input's put is still under way (a serializer holds the put here
// until the node's call is done, or a second: on its own the node calls first): the call waits for the thread's puts still landing. A
// forkpoint edit of that message then forks before the call and undoes it.
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { SessionHandle } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { appendLineTool, readOrNull, tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";
import { HeldSerializer, say } from "./helpers.js";

const dbs = tempDatabases();
const thread = { configurable: { thread_id: "t" } };

describe("a forkpoint edit of a LangGraph input message", () => {
  it("undoes the tool calls the graph's nodes made in answer to it", async () => {
    const { fp } = dbs.open({ tools: [appendLineTool()] });
    const serde = new HeldSerializer();
    const saver = new ForkpointSaver(fp, { userId: "alice", serde });
    const log = path.join(tempDir(), "log");
    let s: SessionHandle | undefined;
    let called = () => {};
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("act", async (state) => {
        s ??= await saver.sessionFor("t", { userId: "alice" });
        await s.invoke("append_line", { path: log, line: String(state.messages.at(-1)!.content) });
        called();
        return { messages: [new AIMessage("done")] };
      })
      .addEdge(START, "act")
      .addEdge("act", END)
      .compile({ checkpointer: saver });
    await graph.invoke(say("one"), thread);
    // The input's put waits until the node has made its call (or a second at most, should the call wait for the put).
    serde.hold = new Promise<void>((resolve) => {
      called = resolve;
      setTimeout(resolve, 1000);
    });
    await graph.invoke(say("two"), thread);
    serde.hold = null;
    expect(readOrNull(log)).toBe("one\ntwo\n");
    const session = await saver.sessionFor("t", { userId: "alice" });
    const two = (await session.history()).find((m) => m.content === "two")!;
    const call = (await session.toolTrack()).find((t) => (t.args as { line: string }).line === "two")!;

    const edited = await session.edit(two.id, { content: "not two" });
    expect(edited.undone.map((t) => t.id)).toEqual([call.id]);
    expect(readOrNull(log)).toBe("one\n");
  });
});
