// An approval node before a prebuilt ToolNode, rolled back to its wait a second time: the new answer is the one obeyed.
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** A "write" tool that writes a real file (its undo deletes it). */
function writeTool() {
  return defineTool<{ file: string; text: string }, null>({
    name: "write",
    run: (args) => {
      writeFileSync(args.file, args.text);
      return null;
    },
    undo: ({ args }) => {
      rmSync(args.file, { force: true });
    },
  });
}

/**
 * Thread "t" of alice: "model" asks to write `file`, "approve" asks "approve?" (an interrupt) and, on "yes", hands the
 * call to a prebuilt ToolNode that makes it through the thread's session; on any other answer the run ends refused.
 */
function approvalBeforeToolNode(saver: ForkpointSaver, file: string) {
  const write = tool(
    async (args, config) => {
      await (await saver.sessionFor("t", { userId: "alice" })).invoke("write", args, { callId: config.toolCall!.id });
      return `wrote ${args.file}`;
    },
    { name: "write", description: "write a file", schema: z.object({ file: z.string(), text: z.string() }) },
  );
  return new StateGraph(MessagesAnnotation)
    .addNode("model", () => ({
      messages: [new AIMessage({ content: "", tool_calls: [{ id: "call_write", name: "write", args: { file, text: "hello" } }] })],
    }))
    .addNode(
      "approve",
      () => {
        const answer = interrupt("approve?") as string;
        return answer === "yes"
          ? new Command({ goto: "tools" })
          : new Command({ goto: END, update: { messages: [new AIMessage(`refused: ${answer}`)] } });
      },
      { ends: ["tools", END] },
    )
    .addNode("tools", new ToolNode([write]))
    .addEdge(START, "model")
    .addEdge("model", "approve")
    .addEdge("tools", END)
    .compile({ checkpointer: saver });
}

describe.each(["sync", "async"] as const)("an approval before a ToolNode, rolled back to its wait twice (durability %s)", (durability) => {
  it.each([{ from: "the refused branch" }, { from: "the approved branch" }])(
    "the second rollback asks again and a refusal writes nothing (from $from)",
    async ({ from }) => {
      const dir = path.dirname(dbs.path());
      const file = path.join(dir, "out.txt");
      const { fp } = dbs.open({ tools: [writeTool()] });
      const saver = new ForkpointSaver(fp, { userId: "alice" });
      const graph = approvalBeforeToolNode(saver, file);
      const config = { configurable: { thread_id: "t" }, durability };
      const contents = (m: BaseMessage[]) => m.map((x) => String(x.content));
      await graph.invoke({ messages: [new HumanMessage("write it")] }, config);
      const s = await saver.sessionFor("t", { userId: "alice" });
      const waiting = await s.checkpoint({ name: "waiting" });

      const yes = await graph.invoke(new Command({ resume: "yes" }), config);
      expect(contents(yes.messages as BaseMessage[]).slice(-2)).toEqual(["", `wrote ${file}`]);
      expect(readFileSync(file, "utf8")).toBe("hello");
      const approved = (await s.info()).currentBranchId;

      await s.rollback(waiting.id);
      expect(existsSync(file)).toBe(false);
      const no = await graph.invoke(new Command({ resume: "no" }), config);
      expect(contents(no.messages as BaseMessage[]).at(-1)).toBe("refused: no");
      expect(existsSync(file)).toBe(false);

      if (from === "the approved branch") await s.switchBranch(approved);
      await s.rollback(waiting.id);
      expect(existsSync(file)).toBe(false);
      const state = await graph.getState(config);
      expect(state.next).toEqual(["approve"]);
      expect(state.tasks.flatMap((t) => t.interrupts.map((i) => i.value))).toEqual(["approve?"]);
      expect(contents(state.values.messages as BaseMessage[])).toEqual(["write it", ""]);

      const again = await graph.invoke(new Command({ resume: "no" }), config);
      expect(contents(again.messages as BaseMessage[]).at(-1)).toBe("refused: no");
      expect(existsSync(file)).toBe(false);
    },
  );
});
