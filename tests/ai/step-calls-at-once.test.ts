// A step's calls start at once: one journaled while another waits to be is the loop's own, and both land with the answer.
import { isStepCount, streamText, tool, type UIMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { expect, it } from "vitest";
import { z } from "zod";
import { loadChat, saveChat, undoableTools } from "../../src/ai/index.js";
import { aroundWrites } from "../fixtures/around-writes.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

type StreamPart = Awaited<ReturnType<MockLanguageModelV4["doStream"]>>["stream"] extends ReadableStream<infer P> ? P : never;

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
const question: UIMessage = { id: "q", role: "user", parts: [{ type: "text", text: "put three" }] };
const put = (id: string, k: string) => ({
  type: "tool-put" as const,
  toolCallId: id,
  state: "output-available" as const,
  input: { k },
  output: k,
});
const callPart = (id: string, k: string): StreamPart => ({
  type: "tool-call",
  toolCallId: id,
  toolName: "put",
  input: JSON.stringify({ k }),
});
const finish = (calls: boolean): StreamPart => ({
  type: "finish",
  finishReason: { unified: calls ? "tool-calls" : "stop", raw: undefined },
  usage,
});

/** Streams `parts`, then ends (the AI SDK runs the step's calls at once when the model's call ends). */
const streamOf = (parts: StreamPart[]): ReadableStream<StreamPart> =>
  new ReadableStream<StreamPart>({
    start(controller) {
      for (const part of parts) controller.enqueue(part);
      controller.close();
    },
  });

it("a step's call journaled while another started with it waits to be: both land on the answer's branch", async () => {
  const { fp } = dbs.open();
  const world = new Set<string>();
  const s = await fp.createSession({ userId: "u" });
  const asked = await saveChat(s, [question]);
  const after = asked.lastMessageId;
  // Step 2's call journaled first is held at its journal until the step's other call (journaled meanwhile) has run.
  let step = 0;
  let ran = () => {};
  const second = new Promise<void>((resolve) => (ran = resolve));
  const execute = async ({ k }: { k: string }) => {
    world.add(k);
    if (step === 2) ran();
    return k;
  };
  const tools = undoableTools(
    s,
    { put: tool({ inputSchema: z.object({ k: z.string() }), execute }) },
    { put: ({ args }) => void world.delete(args.k) },
    { after },
  );
  const model = new MockLanguageModelV4({
    doStream: async () => {
      step++;
      if (step === 1) return { stream: streamOf([callPart("p1", "one"), finish(true)]) };
      if (step > 2)
        return {
          stream: streamOf([
            { type: "text-start", id: "t" },
            { type: "text-delta", id: "t", delta: "done" },
            { type: "text-end", id: "t" },
            finish(false),
          ]),
        };
      // The first step's answer, saved as `onStepEnd` saves it: step 2's calls follow it.
      await saveChat(s, [question, { id: "a", role: "assistant", parts: [{ type: "step-start" }, put("p1", "one")] }], { after });
      let first = true;
      aroundWrites(fp, "before", async () => {
        if (!first) return false;
        first = false;
        // Bounded, so that a test gone wrong fails rather than hangs.
        await Promise.race([second, new Promise((resolve) => setTimeout(resolve, 5_000))]);
        return true;
      });
      return { stream: streamOf([callPart("p2", "two"), callPart("p3", "three"), finish(true)]) };
    },
  });
  const result = streamText({ model, prompt: "put three", tools, stopWhen: isStepCount(5) });
  expect(await result.text).toBe("done");
  const whole: UIMessage = {
    id: "a",
    role: "assistant",
    parts: [
      { type: "step-start" },
      put("p1", "one"),
      { type: "step-start" },
      put("p2", "two"),
      put("p3", "three"),
      { type: "step-start" },
      { type: "text", text: "done" },
    ],
  };
  await saveChat(s, [question, whole], { after });

  expect((await s.branches()).map((b) => b.reason)).toEqual(["root"]);
  expect((await s.toolTrack()).map((t) => [t.callId, t.applied]).sort()).toEqual([
    ["p1", true],
    ["p2", true],
    ["p3", true],
  ]);
  const chat = await loadChat(s);
  expect(chat[1]!.parts.flatMap((p) => ("toolCallId" in p ? [p.toolCallId] : []))).toEqual(["p1", "p2", "p3"]);
  expect([...world].sort()).toEqual(["one", "three", "two"]);
});
