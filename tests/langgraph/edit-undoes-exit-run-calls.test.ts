// An edit of a LangGraph input undoes the tool calls its run's nodes journaled through the thread's session, under
// every durability: under "exit" LangGraph saves the run's messages only once it ends, after those calls, so the input
// names them (by the AI message's tool call ids, passed to `invoke` as `callId`). An app's own call stays. A run from an
// older checkpoint (time travel) keeps its calls on its fork under "async" and "sync"; under "exit" its calls are refused
// (`SESSION_MOVED`) before they are journaled or run, as its one put would fork away from them.
import { AIMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { ConflictError } from "../../src/models/errors.js";
import { appendLineTool, readOrNull, tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";
import { say, texts } from "./helpers.js";

const dbs = tempDatabases();
const thread = { configurable: { thread_id: "t" } };

/**
 * An agent answering with `replies` in turn, whose ToolNode's append_line journals on the thread's session under its
 * call's id (what that call throws is pushed to `errors`, then thrown on).
 */
function toolGraph(saver: ForkpointSaver, replies: AIMessage[], errors: unknown[] = []) {
  const appendLine = tool(
    async (args, config) => {
      const s = await saver.sessionFor("t", { userId: "alice" });
      try {
        await s.invoke("append_line", args, { callId: config.toolCall!.id });
      } catch (error) {
        errors.push(error);
        throw error;
      }
      return "ok";
    },
    { name: "append_line", description: "appends a line", schema: z.object({ path: z.string(), line: z.string() }) },
  );
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", () => ({ messages: [replies.shift()!] }))
    .addNode("tools", new ToolNode([appendLine]))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", toolsCondition)
    .addEdge("tools", "agent")
    .compile({ checkpointer: saver });
}

describe("a forkpoint edit of a LangGraph input", () => {
  for (const durability of ["exit", "async"] as const) {
    it(`undoes the calls its run's tool node made, keeping the app's own (durability "${durability}")`, async () => {
      const { fp } = dbs.open({ tools: [appendLineTool()] });
      const saver = new ForkpointSaver(fp, { userId: "alice" });
      const log = path.join(tempDir(), "log");
      const replies = [
        new AIMessage("hello"),
        new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "append_line", args: { path: log, line: "one" } }] }),
        new AIMessage({ content: "", tool_calls: [{ id: "c2", name: "append_line", args: { path: log, line: "two" } }] }),
        new AIMessage("wrote two lines"),
      ];
      const graph = toolGraph(saver, replies);
      await graph.invoke(say("hi"), { ...thread, durability });
      // The app's own call, between the runs: no message caused it.
      const s = await saver.sessionFor("t", { userId: "alice" });
      await s.invoke("append_line", { path: log, line: "own" });
      const out = await graph.invoke(say("write one, then two"), { ...thread, durability });
      expect(readOrNull(log)).toBe("own\none\ntwo\n");
      // LangGraph reads back exactly what it saved.
      expect(texts((await graph.getState(thread)).values.messages)).toEqual(texts(out.messages));
      expect((await s.toolTrack()).map((t) => t.callId)).toEqual([null, "c1", "c2"]);

      const input = (await s.history()).find((m) => m.content === "write one, then two")!;
      expect((await s.plan({ messageId: input.id })).undone.map((t) => t.callId)).toEqual(["c2", "c1"]);
      const edited = await s.edit(input.id, { content: "write nothing" });
      expect(edited.undone.map((t) => t.callId)).toEqual(["c2", "c1"]);
      expect(readOrNull(log)).toBe("own\n");
      expect(texts((await graph.getState(thread)).values.messages)).toEqual(["human:hi", "ai:hello", "human:write nothing"]);

      // Back on the run's branch: its calls are replayed, and the graph reads its run as it saved it.
      await s.switchBranch(input.branchId);
      expect(readOrNull(log)).toBe("own\none\ntwo\n");
      expect(texts((await graph.getState(thread)).values.messages)).toEqual(texts(out.messages));
    });
  }
});

describe("a LangGraph run from an older checkpoint (time travel)", () => {
  /** Runs "hi", then "write one" (call c1), then "write two" (call c2) from the checkpoint after "hi"; returns what c2's call threw. */
  async function timeTravel(durability: "exit" | "async" | "sync", log: string) {
    const { fp } = dbs.open({ tools: [appendLineTool()] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const replies = [
      new AIMessage("hello"),
      new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "append_line", args: { path: log, line: "one" } }] }),
      new AIMessage("wrote one"),
      new AIMessage({ content: "", tool_calls: [{ id: "c2", name: "append_line", args: { path: log, line: "two" } }] }),
      new AIMessage("wrote two"),
    ];
    const errors: unknown[] = [];
    const graph = toolGraph(saver, replies, errors);
    await graph.invoke(say("hi"), { ...thread, durability });
    const afterHi = (await graph.getState(thread)).config;
    await graph.invoke(say("write one"), { ...thread, durability });
    expect(readOrNull(log)).toBe("one\n");
    await graph.invoke(say("write two"), { ...afterHi, durability });
    return { errors, s: await saver.sessionFor("t", { userId: "alice" }) };
  }

  // Under "exit" its calls would land at the session's head, and its one put then forks at the older checkpoint, a
  // move that undoes them: each call is refused before it is journaled or run.
  it('refuses its tool node\'s calls, journaling and running nothing (durability "exit")', async () => {
    const log = path.join(tempDir(), "log");
    const { errors, s } = await timeTravel("exit", log);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(ConflictError);
    expect(errors[0]).toMatchObject({ code: "SESSION_MOVED", message: expect.stringContaining('durability "async" or "sync"') });
    // The run's fork undid c1; c2 never ran, and is journaled on no branch.
    expect(readOrNull(log) ?? "").toBe("");
    expect((await s.toolTrack()).map((t) => t.callId)).toEqual([]);
    const old = (await s.branches()).find((b) => !b.current && b.head > 0)!;
    await s.switchBranch(old.id);
    expect(readOrNull(log)).toBe("one\n");
    expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["c1"]);
  });

  // Under "async" or "sync" its input's put forks first, and its calls follow it onto the fork.
  for (const durability of ["async", "sync"] as const) {
    it(`keeps the calls its tool node made on its fork (durability "${durability}")`, async () => {
      const log = path.join(tempDir(), "log");
      const { errors, s } = await timeTravel(durability, log);
      expect(errors).toEqual([]);
      expect(readOrNull(log)).toBe("two\n");
      expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["c2"]);
    });
  }
});
