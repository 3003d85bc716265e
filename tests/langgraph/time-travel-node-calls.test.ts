// A tool call a LangGraph node journals through its thread's session, while the put of the step's input is still under
// way and forks (time travel from an older checkpoint), waits for that put: it lands on the fork, after the input, and
// stays applied. (A serializer holds the put until the node has called, or a second: the node always calls first.)
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { SessionHandle } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { appendLineTool, readOrNull, tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";
import { HeldSerializer, say, texts } from "./helpers.js";

const dbs = tempDatabases();
const thread = { configurable: { thread_id: "t" } };

describe("LangGraph time travel over a node that calls a forkpoint tool", () => {
  it("the node's call lands on the fork and stays applied", async () => {
    const { fp } = dbs.open({ tools: [appendLineTool()] });
    const serde = new HeldSerializer();
    const saver = new ForkpointSaver(fp, { userId: "alice", serde });
    const log = path.join(tempDir(), "log");
    let s: SessionHandle | undefined;
    let called = () => {};
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("act", async (state) => {
        s ??= await saver.sessionFor("t", { userId: "alice" });
        const line = String(state.messages.at(-1)!.content);
        await s.invoke("append_line", { path: log, line });
        called();
        return { messages: [new AIMessage(`did ${line}`)] };
      })
      .addEdge(START, "act")
      .addEdge("act", END)
      .compile({ checkpointer: saver });
    await graph.invoke(say("one"), thread);
    await graph.invoke(say("two"), thread);
    const states = [];
    for await (const st of graph.getStateHistory(thread)) states.push(st);
    const afterOne = states.find((st) => texts(st.values.messages ?? []).join("|") === "human:one|ai:did one")!;

    // The fork's put waits until the node has made its call (or a second at most, should LangGraph wait for the put).
    serde.hold = new Promise<void>((resolve) => {
      called = resolve;
      setTimeout(resolve, 1000);
    });
    const forked = await graph.invoke(say("three"), afterOne.config);
    serde.hold = null;
    expect(texts(forked.messages)).toEqual(["human:one", "ai:did one", "human:three", "ai:did three"]);
    const sess = await saver.sessionFor("t", { userId: "alice" });
    expect((await sess.toolTrack()).map((t) => [(t.args as { line: string }).line, t.applied])).toEqual([
      ["one", true],
      ["three", true],
    ]);
    expect(readOrNull(log)).toBe("one\nthree\n");
  });
});
