// docs/ai-sdk.md: the user's stop while a wrapped tool runs. The tool runs on and the track records it as succeeded;
// the answer saved in `onEnd` shows the call without a result, and the next request converts only with
// `ignoreIncompleteToolCalls` (the AI SDK refuses a call without its result otherwise).
import { convertToModelMessages, isStepCount, MissingToolResultsError, streamText, tool, type UIMessage } from "ai";
import { expect, it } from "vitest";
import { z } from "zod";
import { loadChat, saveChat, undoableTools } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { call, scriptedStreamModel, text } from "./mock-model.js";

const dbs = tempDatabases();

it("a call the user stopped: succeeded on the track, saved without its result, left out of the next request", async () => {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  const question: UIMessage = { id: "q", role: "user", parts: [{ type: "text", text: "put it" }] };
  const asked = await saveChat(s, [question]);
  const stop = new AbortController();
  let finish!: () => void;
  const ended = new Promise<void>((resolve) => (finish = resolve));
  const world = new Set<string>();
  // The call's completion, recorded once the tool ended.
  const recorded = new Promise<void>((resolve) => fp.on("tool", () => resolve()));
  // The tool ignores the signal: the user's stop comes while it runs, and it ends after the stream did.
  const put = tool({
    inputSchema: z.object({ k: z.string() }),
    execute: async ({ k }) => {
      stop.abort();
      await ended;
      world.add(k);
      return k;
    },
  });
  const tools = undoableTools(
    s,
    { put },
    { put: ({ args }) => void world.delete(args.k) },
    { after: asked.lastMessageId, abortController: stop },
  );
  const result = streamText({
    model: scriptedStreamModel([[call("p1", "put", { k: "one" })], [text("done")]]),
    messages: await convertToModelMessages([question]),
    tools,
    stopWhen: isStepCount(5),
    abortSignal: stop.signal,
  });
  let saved!: Promise<unknown>;
  const response = result.toUIMessageStreamResponse({
    originalMessages: [question],
    generateMessageId: () => "a",
    onEnd: ({ messages }) => void (saved = saveChat(s, messages, { after: asked.lastMessageId })),
  });
  await response.text();
  await saved;
  finish();
  await recorded;
  expect((await s.toolTrack()).map((t) => [t.callId, t.status])).toEqual([["p1", "succeeded"]]);
  expect([...world]).toEqual(["one"]);

  const chat = await loadChat(s);
  expect(chat.at(-1)!.parts.flatMap((p) => ("toolCallId" in p ? [[p.toolCallId, p.state]] : []))).toEqual([["p1", "input-available"]]);
  const next: UIMessage[] = [...chat, { id: "q2", role: "user", parts: [{ type: "text", text: "go on" }] }];
  // The answer's text, or the error the AI SDK's stream reports (`onError`).
  const ask = async (messages: Awaited<ReturnType<typeof convertToModelMessages>>) => {
    let failed: unknown;
    const turn = streamText({ model: scriptedStreamModel([[text("ok")]]), messages, onError: ({ error }) => void (failed = error) });
    return Promise.resolve(turn.text).catch(() => failed);
  };
  expect(await ask(await convertToModelMessages(next))).toBeInstanceOf(MissingToolResultsError);
  expect(await ask(await convertToModelMessages(next, { ignoreIncompleteToolCalls: true }))).toBe("ok");
});
