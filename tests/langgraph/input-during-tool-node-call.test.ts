// An input sent while another run's prebuilt `ToolNode` call runs: the tool's own config has lost the run's
// `config.control`, and the saver tells the run by the checkpoint the tool's step runs from. The input forks before
// the call (undoing it); the other run's step lands after the call again, replaying it: the head never shows a
// tool's result whose call is undone.
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import type { Checkpoint, CheckpointMetadata } from "@langchain/langgraph-checkpoint";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { latch, sendTool } from "./helpers.js";

const dbs = tempDatabases();

/** A saver telling when run B's first step checkpoint landed. */
class WatchedSaver extends ForkpointSaver {
  onPut?: (config: RunnableConfig, metadata: CheckpointMetadata) => void;
  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    versions: Record<string, string | number>,
  ) {
    const out = await super.put(config, checkpoint, metadata, versions);
    this.onPut?.(config, metadata);
    return out;
  }
}

describe("an input sent while another run's ToolNode call runs", () => {
  it("lands the other run's tool step after its call, replayed", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new WatchedSaver(fp, { userId: "alice" });
    const aCalled = latch();
    const bStepped = latch();
    const model = (state: typeof MessagesAnnotation.State) => {
      const last = state.messages.at(-1)!;
      if (last.getType() !== "human") return { messages: [new AIMessage(`done ${String(last.content)}`)] };
      const text = String(last.content);
      if (!text.startsWith("send ")) return { messages: [new AIMessage(`echo: ${text}`)] };
      return { messages: [new AIMessage({ content: "", tool_calls: [{ id: `call_${text}`, name: "send", args: { t: text.slice(5) } }] })] };
    };
    const send = tool(
      async (args, config) => {
        await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", args, { callId: config.toolCall!.id });
        // The call is made; the tool returns once B's input and first step landed.
        aCalled.open();
        await bStepped.wait();
        return `sent ${args.t}`;
      },
      { name: "send", description: "send", schema: z.object({ t: z.string() }) },
    );
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("model", model)
      .addNode("tools", new ToolNode([send]))
      .addEdge(START, "model")
      .addConditionalEdges("model", toolsCondition)
      .addEdge("tools", "model")
      .compile({ checkpointer: saver });
    const config = (who: string) => ({ configurable: { thread_id: "t", who }, durability: "sync" as const });
    await graph.invoke({ messages: [new HumanMessage("hi")] }, config("x"));
    saver.onPut = (c, metadata) => {
      if (c.configurable?.who === "B" && metadata.source === "loop") bStepped.open();
    };
    const aRun = graph.invoke({ messages: [new HumanMessage("send a")] }, config("A"));
    await aCalled.wait();
    await Promise.allSettled([aRun, graph.invoke({ messages: [new HumanMessage("hello")] }, config("B"))]);

    // The head shows the tool's result only with its call applied.
    const head = (await graph.getState(config("x"))).values.messages as BaseMessage[];
    const shown = head.filter((m) => m.getType() === "tool").map((m) => String(m.content).slice(5));
    expect([...sent].sort()).toEqual(shown);
    const s = await saver.sessionFor("t", { userId: "alice" });
    expect((await s.toolTrack()).filter((c) => c.applied).map((c) => (c.args as { t: string }).t)).toEqual(shown);
    expect((await fp.verify()).ok).toBe(true);
  });
});
