// A run whose prebuilt `ToolNode` call is refused (`SESSION_MOVED`: another run's input landed before the call): the
// ToolNode turns the refusal into a ToolMessage and the run's model goes on, but the run is stopped all the same. Its
// later puts are refused, so the other run's finished step stays the head and its call stays applied.
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { latch, sendTool } from "./helpers.js";

const dbs = tempDatabases();

describe("a ToolNode call refused because another run's input landed first", () => {
  it("stops its run: the other run's step stays the head, its call applied", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const aEntered = latch();
    const bDone = latch();
    const model = (state: typeof MessagesAnnotation.State) => {
      const last = state.messages.at(-1)!;
      if (last.getType() !== "human") return { messages: [new AIMessage(`done ${String(last.content)}`)] };
      const text = String(last.content);
      if (!text.startsWith("send ")) return { messages: [new AIMessage(`echo: ${text}`)] };
      return { messages: [new AIMessage({ content: "", tool_calls: [{ id: `call_${text}`, name: "send", args: { t: text.slice(5) } }] })] };
    };
    const send = tool(
      async (args, config) => {
        const s = await saver.sessionFor("t", { userId: "alice" });
        // A's call is made once B's run has finished.
        if (args.t === "a") {
          aEntered.open();
          await bDone.wait();
        }
        await s.invoke("send", args, { callId: config.toolCall!.id });
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
    const config = { configurable: { thread_id: "t" }, durability: "sync" as const };
    await graph.invoke({ messages: [new HumanMessage("hi")] }, config);
    const aRun = graph.invoke({ messages: [new HumanMessage("send a")] }, config);
    aRun.catch(() => undefined);
    await aEntered.wait();
    const b = await graph.invoke({ messages: [new HumanMessage("send b")] }, config);
    bDone.open();
    await expect(aRun).rejects.toMatchObject({ code: "SESSION_MOVED" });

    const head = (await graph.getState(config)).values.messages as BaseMessage[];
    expect(head.map((m) => String(m.content))).toEqual((b.messages as BaseMessage[]).map((m) => String(m.content)));
    expect(head.filter((m) => m.getType() === "tool").map((m) => String(m.content))).toEqual(["sent b"]);
    expect(sent).toEqual(["b"]);
    const s = await saver.sessionFor("t", { userId: "alice" });
    expect((await s.toolTrack()).filter((c) => c.applied).map((c) => (c.args as { t: string }).t)).toEqual(["b"]);
    expect((await fp.verify()).ok).toBe(true);
  });
});
