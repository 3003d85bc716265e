// docs/ai-sdk.md's route saving in `onStepEnd`, the app making its own call `{ after }` the question there (a usage
// log, an audit entry): the call lands with the answer on its branch, and no branch is forked without the answer.
import { convertToModelMessages, createIdGenerator, isStepCount, streamText, tool, type UIMessage } from "ai";
import { expect, it } from "vitest";
import { z } from "zod";
import { defineTool } from "../../src/index.js";
import { loadChat, saveChat, undoableTools } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { call, scriptedStreamModel, text } from "./mock-model.js";

const dbs = tempDatabases();

for (const how of ["invoke", "recordToolCall"] as const) {
  it(`the app's ${how} { after } the question in onStepEnd lands with the answer, on one branch`, async () => {
    const world = new Set<string>();
    const note = defineTool<{ step: number }, number>({ name: "note", run: async ({ step }) => step, undo: async () => undefined });
    const { fp } = dbs.open({ tools: [note] });
    const s = await fp.createSession({ userId: "u" });
    const messages: UIMessage[] = [{ id: "q", role: "user", parts: [{ type: "text", text: "put them" }] }];
    const asked = await saveChat(s, messages);
    const after = asked.lastMessageId!;
    const put = tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (world.add(k), k) });
    const result = streamText({
      model: scriptedStreamModel([[call("a1", "put", { k: "one" })], [call("b1", "put", { k: "two" })], [text("done")]]),
      messages: await convertToModelMessages(messages),
      tools: undoableTools(s, { put }, { put: ({ args }) => void world.delete(args.k) }, { after }),
      stopWhen: isStepCount(6),
    });
    let step = 0;
    let saved!: Promise<unknown>;
    const ended = new Promise<void>((resolve) => {
      const response = result.toUIMessageStreamResponse({
        originalMessages: messages,
        generateMessageId: createIdGenerator({ prefix: "msg", size: 16 }),
        onStepEnd: async ({ messages: all }) => {
          await saveChat(s, all, { after });
          const n = step++;
          if (how === "invoke") await s.invoke("note", { step: n }, { after });
          else await s.recordToolCall({ tool: "note", args: { step: n }, result: n }, { after });
        },
        onEnd: async ({ messages: all }) => {
          saved = saveChat(s, all, { after });
          await saved.finally(resolve);
        },
      });
      void response.text();
    });
    await ended;
    await saved;
    expect(await s.branches()).toHaveLength(1);
    expect((await loadChat(s)).map((m) => m.role)).toEqual(["user", "assistant"]);
    expect((await s.toolTrack()).map((t) => [t.tool, t.args, t.applied])).toEqual([
      ["put", { k: "one" }, true],
      ["note", { step: 0 }, true],
      ["put", { k: "two" }, true],
      ["note", { step: 1 }, true],
      ["note", { step: 2 }, true],
    ]);
    expect([...world].sort()).toEqual(["one", "two"]);
  });
}
