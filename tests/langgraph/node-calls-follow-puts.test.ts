// A tool node's call lands after the message of the node before it that asked for it, although LangGraph issues that
// step's put only once the input's put has landed, while the tool node may already run: the call waits for the
// thread's puts still landing, those that started meanwhile too, through any handle of the session on the Forkpoint.
// (A serializer holds the input's put until the tool node starts, then the step's put until the call is done or a
// second has passed: on their own, the call starts between the two puts and lands before the message.)
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { JsonPlusSerializer } from "@langchain/langgraph-checkpoint";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { SessionHandle } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { appendLineTool, readOrNull, tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";
import { say } from "./helpers.js";

const dbs = tempDatabases();
const thread = { configurable: { thread_id: "t" } };

/** A serializer that holds the metadata of puts of a source (`holds`) until its promise settles. */
class HeldSerializer extends JsonPlusSerializer {
  holds = new Map<string, Promise<void>>();
  override async dumpsTyped(value: unknown): Promise<[string, Uint8Array]> {
    const source = (value as { source?: unknown } | null)?.source;
    const hold = typeof source === "string" ? this.holds.get(source) : undefined;
    if (hold) await hold;
    return super.dumpsTyped(value);
  }
}

/** A promise and what settles it: a signal a test's node gives, or a second at most (the signal may never come). */
function signal(): { promise: Promise<void>; give: () => void } {
  let give = () => {};
  const promise = new Promise<void>((resolve) => {
    give = resolve;
    setTimeout(resolve, 1000);
  });
  return { promise, give };
}

describe("a LangGraph tool node's call", () => {
  it("lands after the message that asked for it", async () => {
    const { fp } = dbs.open({ tools: [appendLineTool()] });
    const serde = new HeldSerializer();
    const saver = new ForkpointSaver(fp, { userId: "alice", serde });
    const log = path.join(tempDir(), "log");
    let s: SessionHandle | undefined;
    let started = () => {};
    let called = () => {};
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("think", (state) => ({ messages: [new AIMessage(`asks for ${String(state.messages.at(-1)!.content)}`)] }))
      .addNode("act", async (state) => {
        // The session as `fp.getSession` gives it: any handle of the session on this Forkpoint waits alike.
        s ??= await fp.getSession((await saver.sessionFor("t", { userId: "alice" })).id, { userId: "alice" });
        started();
        const line = String(state.messages.at(-2)!.content);
        await s.invoke("append_line", { path: log, line });
        called();
        return { messages: [new AIMessage("done")] };
      })
      .addEdge(START, "think")
      .addEdge("think", "act")
      .addEdge("act", END)
      .compile({ checkpointer: saver });
    await graph.invoke(say("one"), thread);

    const input = signal();
    const loop = signal();
    started = () => setImmediate(input.give);
    called = loop.give;
    serde.holds.set("input", input.promise);
    serde.holds.set("loop", loop.promise);
    await graph.invoke(say("two"), thread);
    serde.holds.clear();
    expect(readOrNull(log)).toBe("one\ntwo\n");

    const session = await saver.sessionFor("t", { userId: "alice" });
    const asks = (await session.history()).find((m) => m.content === "asks for two")!;
    const call = (await session.toolTrack()).find((t) => (t.args as { line: string }).line === "two")!;
    const edited = await session.edit(asks.id, { content: "asks for nothing" });
    expect(edited.undone.map((t) => t.id)).toEqual([call.id]);
    expect(readOrNull(log)).toBe("one\n");
  });
});
