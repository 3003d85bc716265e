// docs/ai-sdk.md's route saving in `onStepEnd` and `onEnd` `{ after }` the question, tools wrapped `{ after }` it, while
// another tab (or another request for the same question) writes to the session: the loop's calls land with its answer,
// on a branch holding the loop's calls and no other loop's, so choosing the answer keeps exactly what it shows.
import { isStepCount, streamText, tool, type UIMessage } from "ai";
import { expect, it } from "vitest";
import { z } from "zod";
import type { SessionHandle } from "../../src/index.js";
import { aiCheckpointTools, loadChat, saveChat, undoableTools } from "../../src/ai/index.js";
import { aroundWrites } from "../fixtures/around-writes.js";
import { tempDatabases } from "../helpers.js";
import { call, scriptedStreamModel, text } from "./mock-model.js";

const dbs = tempDatabases();

const question: UIMessage = { id: "q", role: "user", parts: [{ type: "text", text: "put them" }] };
const asked2: UIMessage = { id: "qB", role: "user", parts: [{ type: "text", text: "tab B asks" }] };
const answerB: UIMessage = { id: "b", role: "assistant", parts: [{ type: "step-start" }, { type: "text", text: "B answers" }] };

type Part = UIMessage["parts"][number];
const put = (id: string, k: string): Part => ({ type: "tool-put", toolCallId: id, state: "output-available", input: { k }, output: k });
const looked: Part = { type: "tool-lookup", toolCallId: "l1", state: "output-available", input: { q: "x" }, output: "found x" };

/** The answer as `onStepEnd` saves it once the given steps have ended (each step's parts), then the text when done. */
function answer(steps: Part[][], done = false): UIMessage {
  const parts = steps.flatMap((step) => [{ type: "step-start" as const }, ...step]);
  return {
    id: "a",
    role: "assistant",
    parts: [...parts, ...(done ? [{ type: "step-start" as const }, { type: "text" as const, text: "done" }] : [])],
  };
}

/** The world's files as a set, with the `put` tool writing into it, wrapped for `s` `{ after }` the question. */
function putTools(s: SessionHandle, world: Set<string>, after: string | null) {
  const putTool = tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (world.add(k), k) });
  return undoableTools(s, { put: putTool }, { put: ({ args }) => void world.delete(args.k) }, { after });
}

/** Tab B loads the chat (with where it is) and asks; its answer (text only) is saved after its question. */
async function tabAsks(s: SessionHandle): Promise<void> {
  const { currentBranchId: branchId, position: head } = await s.summary();
  const shown = await loadChat(s);
  const askedB = await saveChat(s, [...shown, asked2], { ifAt: { branchId, head } });
  await saveChat(s, [...shown, asked2, answerB], { after: askedB.lastMessageId });
}

/** Switches to the branch that is not the current one (there must be one) and returns what it shows and holds. */
async function pickOther(s: SessionHandle, world: Set<string>) {
  const others = (await s.branches()).filter((b) => !b.current);
  expect(others).toHaveLength(1);
  await s.switchBranch(others[0]!.id);
  const chat = await loadChat(s);
  return {
    chat: chat.map((m) => m.id),
    calls: chat.flatMap((m) => m.parts.flatMap((p) => ("toolCallId" in p ? [p.toolCallId] : []))),
    track: (await s.toolTrack()).map((t) => [t.callId, t.applied]),
    world: [...world].sort(),
  };
}

it("tab B asks after the loop's second step is saved: the third call lands with the first two, on the answer's branch", async () => {
  const { fp } = dbs.open();
  const world = new Set<string>();
  const s = await fp.createSession({ userId: "u" });
  const asked = await saveChat(s, [question]);
  const steps = [[put("p1", "one")], [put("p2", "two")], [put("p3", "three")]];
  const model = scriptedStreamModel(
    [[call("p1", "put", { k: "one" })], [call("p2", "put", { k: "two" })], [call("p3", "put", { k: "three" })], [text("done")]],
    async (step) => {
      // Each step's answer saved (`onStepEnd`) before the next step's call; tab B asks once the second one is.
      if (step > 0 && step <= steps.length) await saveChat(s, [question, answer(steps.slice(0, step))], { after: asked.lastMessageId });
      if (step === 2) await tabAsks(s);
    },
  );
  const result = streamText({ model, prompt: "put them", tools: putTools(s, world, asked.lastMessageId), stopWhen: isStepCount(6) });
  expect(await result.text).toBe("done");
  await saveChat(s, [question, answer(steps, true)], { after: asked.lastMessageId });

  // The session stays on tab B's conversation; its question and the answer's next form are versions.
  expect((await loadChat(s)).map((m) => m.id)).toEqual(["q", "a", "qB", "b"]);
  const asked2Stored = (await s.history()).find((m) => m.clientId === "qB")!;
  expect(await s.versions(asked2Stored.id)).toMatchObject({ index: 0, count: 2 });
  expect(await pickOther(s, world)).toEqual({
    chat: ["q", "a"],
    calls: ["p1", "p2", "p3"],
    track: [
      ["p1", true],
      ["p2", true],
      ["p3", true],
    ],
    world: ["one", "three", "two"],
  });
});

it("past tab B's question, a step's save landing between the next call's read and its journal: the call reads again", async () => {
  const { fp, path } = dbs.open();
  // Tab B and the step saves are another server's, so that a save lands exactly there (see aroundWrites).
  const { fp: other } = dbs.open({ path });
  const world = new Set<string>();
  const s = await fp.createSession({ userId: "u" });
  const elsewhere = await other.getSession(s.id, { userId: "u" });
  const asked = await saveChat(s, [question]);
  const steps = [[put("p1", "one")], [put("p2", "two")], [put("p3", "three")], [put("p4", "four")]];
  let landing: UIMessage | null = null;
  let landed = 0;
  aroundWrites(fp, "before", async () => {
    const saving = landing;
    landing = null;
    if (saving) landed += (await saveChat(elsewhere, [question, saving], { after: asked.lastMessageId })).appended;
    return false;
  });
  const model = scriptedStreamModel(
    [...steps.map((step, i) => [call(`p${i + 1}`, "put", { k: (step[0] as { input: { k: string } }).input.k })]), [text("done")]],
    async (step) => {
      // The third step's save lands right before the fourth call's journal, once that call has read what to follow.
      if (step === 3) landing = answer(steps.slice(0, step));
      else if (step > 0 && step <= steps.length)
        await saveChat(elsewhere, [question, answer(steps.slice(0, step))], { after: asked.lastMessageId });
      if (step === 2) await tabAsks(elsewhere);
    },
  );
  const result = streamText({ model, prompt: "put them", tools: putTools(s, world, asked.lastMessageId), stopWhen: isStepCount(8) });
  expect(await result.text).toBe("done");
  expect(landed).toBe(1);
  await saveChat(s, [question, answer(steps, true)], { after: asked.lastMessageId });

  expect((await loadChat(s)).map((m) => m.id)).toEqual(["q", "a", "qB", "b"]);
  expect(await pickOther(s, world)).toEqual({
    chat: ["q", "a"],
    calls: ["p1", "p2", "p3", "p4"],
    track: [
      ["p1", true],
      ["p2", true],
      ["p3", true],
      ["p4", true],
    ],
    world: ["four", "one", "three", "two"],
  });
});

it("tab B asks after the loop's last call is saved: the answer lands on a branch holding all its calls", async () => {
  const { fp } = dbs.open();
  const world = new Set<string>();
  const s = await fp.createSession({ userId: "u" });
  const asked = await saveChat(s, [question]);
  const steps = [[put("p1", "one")], [put("p2", "two")]];
  const model = scriptedStreamModel(
    [[call("p1", "put", { k: "one" })], [call("p2", "put", { k: "two" })], [text("done")]],
    async (step) => {
      if (step > 0 && step <= steps.length) await saveChat(s, [question, answer(steps.slice(0, step))], { after: asked.lastMessageId });
      if (step === 2) await tabAsks(s);
    },
  );
  const result = streamText({ model, prompt: "put them", tools: putTools(s, world, asked.lastMessageId), stopWhen: isStepCount(6) });
  expect(await result.text).toBe("done");
  await saveChat(s, [question, answer(steps, true)], { after: asked.lastMessageId });

  expect((await loadChat(s)).map((m) => m.id)).toEqual(["q", "a", "qB", "b"]);
  expect(await pickOther(s, world)).toEqual({
    chat: ["q", "a"],
    calls: ["p1", "p2"],
    track: [
      ["p1", true],
      ["p2", true],
    ],
    world: ["one", "two"],
  });
});

it.each(["lookup", "create_checkpoint"] as const)(
  "a first step of %s only (not wrapped), saved, then tab B asks: the loop's later calls stay together on its answer's branch",
  async (first) => {
    const { fp } = dbs.open();
    const world = new Set<string>();
    const s = await fp.createSession({ userId: "u" });
    const asked = await saveChat(s, [question]);
    const lookup = tool({ inputSchema: z.object({ q: z.string() }), execute: async ({ q }) => `found ${q}` });
    const firstCall = first === "lookup" ? call("l1", "lookup", { q: "x" }) : call("l1", "create_checkpoint", { name: "m" });
    const firstPart: Part =
      first === "lookup"
        ? looked
        : { type: "tool-create_checkpoint", toolCallId: "l1", state: "output-available", input: { name: "m" }, output: "made" };
    const steps = [[firstPart], [put("p1", "one")], [put("p2", "two")]];
    const model = scriptedStreamModel(
      [[firstCall], [call("p1", "put", { k: "one" })], [call("p2", "put", { k: "two" })], [text("done")]],
      async (step) => {
        if (step > 0 && step <= steps.length) await saveChat(s, [question, answer(steps.slice(0, step))], { after: asked.lastMessageId });
        if (step === 1) await tabAsks(s);
      },
    );
    const tools = { ...putTools(s, world, asked.lastMessageId), lookup, ...aiCheckpointTools(s) };
    const result = streamText({ model, prompt: "look, then put", tools, stopWhen: isStepCount(6) });
    expect(await result.text).toBe("done");
    await saveChat(s, [question, answer(steps, true)], { after: asked.lastMessageId });

    expect((await loadChat(s)).map((m) => m.id)).toEqual(["q", "a", "qB", "b"]);
    expect(await pickOther(s, world)).toEqual({
      chat: ["q", "a"],
      calls: ["l1", "p1", "p2"],
      track: [
        ["p1", true],
        ["p2", true],
      ],
      world: ["one", "two"],
    });
  },
);

it("a second request for the same question (a double submit) forks without the first request's calls", async () => {
  const { fp } = dbs.open();
  const world = new Set<string>();
  const s = await fp.createSession({ userId: "u" });
  const asked = await saveChat(s, [question]);
  const bAnswer: UIMessage = {
    id: "b",
    role: "assistant",
    parts: [{ type: "step-start" }, put("b1", "bee"), { type: "step-start" }, { type: "text", text: "B done" }],
  };
  const model = scriptedStreamModel(
    [[call("p1", "put", { k: "one" })], [call("p2", "put", { k: "two" })], [text("done")]],
    async (step) => {
      if (step !== 1) return;
      // The same [question] again, before the first request's step is saved: it writes nothing and follows the question.
      const again = await saveChat(s, [question]);
      const toolsB = putTools(s, world, again.lastMessageId);
      await saveChat(s, [question, answer([[put("p1", "one")]])], { after: asked.lastMessageId });
      const b = streamText({
        model: scriptedStreamModel([[call("b1", "put", { k: "bee" })], [text("B done")]]),
        prompt: "put them",
        tools: toolsB,
        stopWhen: isStepCount(5),
      });
      expect(await b.text).toBe("B done");
      await saveChat(s, [question, bAnswer], { after: again.lastMessageId });
    },
  );
  const result = streamText({ model, prompt: "put them", tools: putTools(s, world, asked.lastMessageId), stopWhen: isStepCount(6) });
  expect(await result.text).toBe("done");
  await saveChat(s, [question, answer([[put("p1", "one")], [put("p2", "two")]], true)], { after: asked.lastMessageId });

  expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["p1", "p2"]);
  expect(await pickOther(s, world)).toEqual({ chat: ["q", "b"], calls: ["b1"], track: [["b1", true]], world: ["bee"] });
});
