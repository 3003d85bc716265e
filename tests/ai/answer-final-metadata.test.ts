// From the adapters review: the route of docs/ai-sdk.md with `messageMetadata` (a start time on start, usage on finish).
// The end's save differs from the last step's only in the answer's own metadata; that metadata is the answer's, kept.
import { convertToModelMessages, createIdGenerator, isStepCount, streamText, tool, type UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { SessionHandle } from "../../src/index.js";
import { loadChat, saveChat, undoableTools } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { call, scriptedStreamModel, text } from "./mock-model.js";

const dbs = tempDatabases();

const question: UIMessage = { id: "q", role: "user", parts: [{ type: "text", text: "note x" }] };

/** The docs' route: saved before the loop, then `after` the question in `onEnd` (and `onStepEnd` with `eachStep`). */
async function route(s: SessionHandle, eachStep: boolean): Promise<UIMessage[]> {
  const asked = await saveChat(s, [question]);
  const tools = { note: tool({ inputSchema: z.object({ t: z.string() }), execute: async ({ t }) => t }) };
  const result = streamText({
    model: scriptedStreamModel([[call("c1", "note", { t: "x" })], [text("noted")]]),
    messages: await convertToModelMessages([question]),
    tools: undoableTools(s, tools, { note: async () => undefined }, { after: asked.lastMessageId }),
    stopWhen: isStepCount(5),
  });
  let ended: UIMessage[] = [];
  const save = async ({ messages }: { messages: UIMessage[] }) => void (await saveChat(s, messages, { after: asked.lastMessageId }));
  await result
    .toUIMessageStreamResponse({
      originalMessages: [question],
      generateMessageId: createIdGenerator({ prefix: "msg", size: 16 }),
      messageMetadata: ({ part }) =>
        part.type === "start"
          ? { startedAt: 1 }
          : part.type === "finish"
            ? { startedAt: 1, totalTokens: part.totalUsage.totalTokens }
            : undefined,
      ...(eachStep ? { onStepEnd: save } : {}),
      onEnd: async (end) => {
        ended = end.messages;
        await save(end);
      },
    })
    .text();
  return ended;
}

describe("an answer's metadata sent with its end", () => {
  for (const eachStep of [true, false]) {
    it(`is stored with the answer (${eachStep ? "saved after each step too" : "saved at the end only"})`, async () => {
      const { fp } = dbs.open();
      const s = await fp.createSession({ userId: "u" });
      const ended = await route(s, eachStep);
      expect(ended.at(-1)!.metadata).toEqual({ startedAt: 1, totalTokens: 4 });
      const chat = await loadChat(s);
      expect(chat).toEqual(ended);
      // The same list saved again writes nothing; one without metadata there keeps what is stored.
      const at = (await s.history())[0]!.id;
      expect(await saveChat(s, ended, { after: at })).toMatchObject({ appended: 0 });
      expect(await saveChat(s, ended)).toMatchObject({ appended: 0, forked: null });
      const { metadata: _, ...bare } = ended.at(-1)!;
      expect(await saveChat(s, [question, bare])).toMatchObject({ appended: 0, forked: null });
      expect(await loadChat(s)).toEqual(ended);
      expect(await s.branches()).toHaveLength(1);
    });
  }

  it("saved without `after`: stored too, and an earlier message's metadata change still is not", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const answer: UIMessage = { id: "a", role: "assistant", metadata: { startedAt: 1 }, parts: [{ type: "text", text: "hi" }] };
    await saveChat(s, [question, answer]);
    const finished = { ...answer, metadata: { startedAt: 1, totalTokens: 3 } };
    expect(await saveChat(s, [question, finished])).toMatchObject({ continued: true, appended: 1, forked: null });
    expect(await loadChat(s)).toEqual([question, finished]);
    const liked = { ...question, metadata: { liked: true } };
    expect(await saveChat(s, [liked, finished])).toMatchObject({ appended: 0, forked: null });
    expect(await loadChat(s)).toEqual([question, finished]);
  });
});

describe("an answer's end metadata after another tab asked on", () => {
  it("keeps the answer as it is: no branch holding its metadata alone, no false version of the next question", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const asked = await saveChat(s, [question]);
    const answer: UIMessage = { id: "a", role: "assistant", metadata: { startedAt: 1 }, parts: [{ type: "text", text: "noted" }] };
    await saveChat(s, [question, answer], { after: asked.lastMessageId });
    const next: UIMessage = { id: "q2", role: "user", parts: [{ type: "text", text: "more" }] };
    const at = await s.summary();
    await saveChat(s, [question, answer, next], { ifAt: { branchId: at.currentBranchId, head: at.position } });
    const end = await saveChat(s, [question, { ...answer, metadata: { startedAt: 1, totalTokens: 4 } }], { after: asked.lastMessageId });
    expect(end).toMatchObject({ appended: 0, forked: null });
    expect(await s.branches()).toHaveLength(1);
    expect((await loadChat(s)).map((m) => m.id)).toEqual(["q", "a", "q2"]);
    const q2 = (await s.history()).find((m) => m.clientId === "q2")!;
    expect((await s.versions(q2.id)).versions).toHaveLength(1);
  });
});
