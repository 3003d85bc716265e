// docs/ai-sdk.md's route saving in `onStepEnd`: a step's save may land between what the next step's tool call read (the
// answer's form to follow) and the call's journal. The call still lands with the answer, on its branch: nothing forks.
import { isStepCount, streamText, tool, type UIMessage } from "ai";
import { expect, it } from "vitest";
import { z } from "zod";
import { loadChat, saveChat, undoableTools } from "../../src/ai/index.js";
import { aroundWrites } from "../fixtures/around-writes.js";
import { tempDatabases } from "../helpers.js";
import { call, scriptedStreamModel, text } from "./mock-model.js";

const dbs = tempDatabases();

const question: UIMessage = { id: "q", role: "user", parts: [{ type: "text", text: "put three" }] };
const keys = ["one", "two", "three"];

/** The answer as `onStepEnd` saves it once `steps` steps have ended: one `put` per step, then the text. */
function answer(steps: number, done = false): UIMessage {
  const puts = keys
    .slice(0, steps)
    .flatMap((k, i) => [
      { type: "step-start" as const },
      { type: "tool-put" as const, toolCallId: `p${i + 1}`, state: "output-available" as const, input: { k }, output: k },
    ]);
  return {
    id: "a",
    role: "assistant",
    parts: [...puts, ...(done ? [{ type: "step-start" as const }, { type: "text" as const, text: "done" }] : [])],
  };
}

it("a step's save landing between the next call's read and its journal: the call lands on the answer's branch", async () => {
  const { fp, path } = dbs.open();
  // The step saves come from another server, so that they land exactly there (see aroundWrites).
  const { fp: other } = dbs.open({ path });
  const world = new Set<string>();
  const s = await fp.createSession({ userId: "u" });
  const asked = await saveChat(s, [question]);
  const elsewhere = await other.getSession(s.id, { userId: "u" });
  // Before each step after the first, the answer saved after the step before it, landing right before the first write
  // that follows: the step's call's journal, once that call has read what follows the question.
  let landing: UIMessage | null = null;
  let landed = 0;
  aroundWrites(fp, "before", async () => {
    const saving = landing;
    landing = null;
    if (saving) landed += (await saveChat(elsewhere, [question, saving], { after: asked.lastMessageId })).appended;
    return false;
  });
  const put = tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (world.add(k), k) });
  const tools = undoableTools(s, { put }, { put: ({ args }) => void world.delete(args.k) }, { after: asked.lastMessageId });
  const model = scriptedStreamModel([...keys.map((k, i) => [call(`p${i + 1}`, "put", { k })]), [text("done")]], async (step) => {
    if (step > 0 && step < keys.length) landing = answer(step);
  });
  const result = streamText({ model, prompt: "put three", tools, stopWhen: isStepCount(6) });
  expect(await result.text).toBe("done");
  expect(landed).toBe(2);
  // The whole answer, saved as `onEnd` saves it.
  await saveChat(s, [question, answer(keys.length, true)], { after: asked.lastMessageId });

  expect((await s.branches()).map((b) => b.reason)).toEqual(["root"]);
  expect((await s.toolTrack()).map((t) => [t.callId, t.applied])).toEqual([
    ["p1", true],
    ["p2", true],
    ["p3", true],
  ]);
  const chat = await loadChat(s);
  expect(chat.map((m) => m.id)).toEqual(["q", "a"]);
  expect(chat[1]!.parts.flatMap((p) => ("toolCallId" in p ? [p.toolCallId] : []))).toEqual(["p1", "p2", "p3"]);
  expect([...world].sort()).toEqual(["one", "three", "two"]);
});

it("a step whose calls are of a tool not wrapped, saved before the next step's call: that call follows the answer", async () => {
  const { fp } = dbs.open();
  const world = new Set<string>();
  const s = await fp.createSession({ userId: "u" });
  const asked = await saveChat(s, [question]);
  const lookup = tool({ inputSchema: z.object({ q: z.string() }), execute: async ({ q }) => `found ${q}` });
  const put = tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (world.add(k), k) });
  const tools = { ...undoableTools(s, { put }, { put: ({ args }) => void world.delete(args.k) }, { after: asked.lastMessageId }), lookup };
  const looked = {
    type: "tool-lookup" as const,
    toolCallId: "l1",
    state: "output-available" as const,
    input: { q: "x" },
    output: "found x",
  };
  const stored = { type: "tool-put" as const, toolCallId: "p1", state: "output-available" as const, input: { k: "one" }, output: "one" };
  const first: UIMessage = { id: "a", role: "assistant", parts: [{ type: "step-start" }, looked] };
  const model = scriptedStreamModel(
    [[call("l1", "lookup", { q: "x" })], [call("p1", "put", { k: "one" })], [text("done")]],
    async (step) => {
      // The first step's answer, saved (`onStepEnd`) before the next step's call: it names no call of the wrapped tools.
      if (step === 1) await saveChat(s, [question, first], { after: asked.lastMessageId });
    },
  );
  const result = streamText({ model, prompt: "look, then put", tools, stopWhen: isStepCount(5) });
  expect(await result.text).toBe("done");
  const whole: UIMessage = {
    ...first,
    parts: [...first.parts, { type: "step-start" }, stored, { type: "step-start" }, { type: "text", text: "done" }],
  };
  await saveChat(s, [question, whole], { after: asked.lastMessageId });

  expect((await s.branches()).map((b) => b.reason)).toEqual(["root"]);
  expect((await s.toolTrack()).map((t) => [t.callId, t.applied])).toEqual([["p1", true]]);
  const chat = await loadChat(s);
  expect(chat[1]!.parts.flatMap((p) => ("toolCallId" in p ? [p.toolCallId] : []))).toEqual(["l1", "p1"]);
  expect([...world]).toEqual(["one"]);
});
