// A double submit through docs/ai-sdk.md's route saving in `onStepEnd` and making the app's own call there: `{ after }`
// the question, no answer's branch gets the other request's calls; `{ after }` the step save's form, each gets its own.
import { convertToModelMessages, createIdGenerator, isStepCount, streamText, tool, type UIMessage } from "ai";
import { expect, it } from "vitest";
import { z } from "zod";
import { defineTool, type SessionHandle } from "../../src/index.js";
import { loadChat, saveChat, undoableTools, type SaveResult } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { call, scriptedStreamModel, text } from "./mock-model.js";

const dbs = tempDatabases();

type Form = "question" | "step's save";

const messages: UIMessage[] = [{ id: "q", role: "user", parts: [{ type: "text", text: "put them" }] }];

/**
 * One request's loop, after its save of the question (`after`); `during` runs before the loop's second step, once the
 * first step's save and the app's call are in.
 */
async function answer(s: SessionHandle, world: Set<string>, after: string, tag: string, form: Form, during?: () => Promise<void>) {
  const put = tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (world.add(k), k) });
  let firstStep!: () => void;
  const firstStepDone = new Promise<void>((resolve) => (firstStep = resolve));
  const model = scriptedStreamModel(
    [[call("call_0", "put", { k: `${tag}1` })], [call("call_0", "put", { k: `${tag}2` })], [text("done")]],
    async (n) => {
      if (n === 1) await firstStepDone.then(during);
    },
  );
  const result = streamText({
    model,
    messages: await convertToModelMessages(messages),
    tools: undoableTools(s, { put }, { put: ({ args }) => void world.delete(args.k) }, { after }),
    stopWhen: isStepCount(6),
    abortSignal: new AbortController().signal,
  });
  let step = 0;
  return new Promise<SaveResult>((resolve, reject) => {
    const response = result.toUIMessageStreamResponse({
      originalMessages: messages,
      generateMessageId: createIdGenerator({ prefix: `msg${tag}`, size: 16 }),
      onStepEnd: async ({ messages: all }) => {
        const saved = await saveChat(s, all, { after });
        await s.invoke("note", { k: `app${tag}${step++}` }, { after: form === "question" ? after : saved.lastMessageId! });
        if (step === 1) firstStep();
      },
      onEnd: async ({ messages: all }) => saveChat(s, all, { after }).then(resolve, reject),
    });
    void response.text();
  });
}

/** What the answer on `saved`'s branch shows and which calls that branch holds applied, once switched to. */
async function answerOn(s: SessionHandle, world: Set<string>, saved: SaveResult) {
  await s.switchBranch(saved.branchId);
  const applied = (await s.toolTrack()).filter((t) => t.applied).map((t) => (t.args as { k: string }).k);
  expect([...world].sort()).toEqual([...applied].sort());
  return { answer: (await loadChat(s)).at(-1)!.id, applied };
}

for (const form of ["question", "step's save"] as const) {
  it(`a double submit making the app's call { after } the ${form} in onStepEnd: no answer gets the other's calls`, async () => {
    const world = new Set<string>();
    const note = defineTool<{ k: string }, string>({
      name: "note",
      run: async ({ k }) => (world.add(k), k),
      undo: async ({ args }) => void world.delete(args.k),
    });
    const { fp } = dbs.open({ tools: [note] });
    const s = await fp.createSession({ userId: "u" });
    // Both requests save the question before either loop starts (sent at once): the second save writes nothing.
    const askedA = await saveChat(s, messages);
    const askedB = await saveChat(s, messages);
    let savedB!: SaveResult;
    const savedA = await answer(s, world, askedA.lastMessageId!, "A", form, async () => {
      savedB = await answer(s, world, askedB.lastMessageId!, "B", form);
    });
    const a = await answerOn(s, world, savedA);
    const b = await answerOn(s, world, savedB);
    expect(a.answer).toMatch(/^msgA/);
    expect(b.answer).toMatch(/^msgB/);
    expect(a.applied.filter((k) => k.includes("B"))).toEqual([]);
    expect(b.applied.filter((k) => k.includes("A"))).toEqual([]);
    expect(a.applied.filter((k) => !k.startsWith("app"))).toEqual(["A1", "A2"]);
    expect(b.applied.filter((k) => !k.startsWith("app"))).toEqual(["B1", "B2"]);
    if (form === "step's save") {
      expect(a.applied).toEqual(["A1", "appA0", "A2", "appA1", "appA2"]);
      expect(b.applied).toEqual(["B1", "appB0", "B2", "appB1", "appB2"]);
    }
  });
}
