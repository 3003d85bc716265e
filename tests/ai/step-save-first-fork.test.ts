// Another tab writes before the loop's first step is saved: the save forks, and the loop's later calls follow it there.
// docs/ai-sdk.md's route saving in `onStepEnd` and `onEnd` `{ after }` the question, tools wrapped `{ after }` it: tab B
// asks, or sends the same question again (a double submit), before the loop's first call or its first step's save. The
// first save of the answer then forks right after the question; the loop's later calls must land on that branch, with
// the answer's calls and no other request's, so choosing the answer keeps exactly the calls it shows.
import { isStepCount, streamText, tool, type UIMessage } from "ai";
import { expect, it } from "vitest";
import { z } from "zod";
import type { SessionHandle } from "../../src/index.js";
import { loadChat, saveChat, undoableTools } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { call, scriptedStreamModel, text } from "./mock-model.js";

const dbs = tempDatabases();

const question: UIMessage = { id: "q", role: "user", parts: [{ type: "text", text: "put them" }] };
const askedB: UIMessage = { id: "qB", role: "user", parts: [{ type: "text", text: "tab B asks" }] };

type Part = UIMessage["parts"][number];
const put = (id: string, k: string): Part => ({ type: "tool-put", toolCallId: id, state: "output-available", input: { k }, output: k });
const looked: Part = { type: "tool-lookup", toolCallId: "l1", state: "output-available", input: { q: "x" }, output: "found x" };

/** An answer as `onStepEnd` saves it once the given steps have ended (each step's parts), then the text when done. */
function answer(id: string, steps: Part[][], done = false): UIMessage {
  const parts = steps.flatMap((step) => [{ type: "step-start" as const }, ...step]);
  return {
    id,
    role: "assistant",
    parts: [...parts, ...(done ? [{ type: "step-start" as const }, { type: "text" as const, text: "done" }] : [])],
  };
}

/** The `put` tool writing into the world's set, wrapped for `s` `{ after }` the question. */
function putTools(s: SessionHandle, world: Set<string>, after: string | null) {
  const putTool = tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (world.add(k), k) });
  return undoableTools(s, { put: putTool }, { put: ({ args }) => void world.delete(args.k) }, { after });
}

/** Tab B's loop (one `put` call, b1), answering `history` (its last message stored as `after`), saved as the route does. */
async function tabBAnswers(s: SessionHandle, world: Set<string>, history: UIMessage[], after: string | null): Promise<void> {
  const b = streamText({
    model: scriptedStreamModel([[call("b1", "put", { k: "bee" })], [text("done")]]),
    prompt: "put bee",
    tools: putTools(s, world, after),
    stopWhen: isStepCount(5),
  });
  expect(await b.text).toBe("done");
  await saveChat(s, [...history, answer("b", [[put("b1", "bee")]], true)], { after });
}

/** Tab B loads the chat (with where it is), asks its own question and answers it. */
async function tabAsks(s: SessionHandle, world: Set<string>): Promise<void> {
  const { currentBranchId: branchId, position: head } = await s.summary();
  const shown = await loadChat(s);
  const asked = await saveChat(s, [...shown, askedB], { ifAt: { branchId, head } });
  await tabBAnswers(s, world, [...shown, askedB], asked.lastMessageId);
}

/** Tab B sends the same question again (a double submit: it writes nothing, and follows the stored question) and answers it. */
async function tabSendsAgain(s: SessionHandle, world: Set<string>): Promise<void> {
  const again = await saveChat(s, [question]);
  await tabBAnswers(s, world, [question], again.lastMessageId);
}

/** What each branch shows and holds: its chat's ids, the calls the chat names, its track; the world on the answer's. */
async function branchesHold(s: SessionHandle, world: Set<string>) {
  const out: { chat: string[]; calls: string[]; track: string[] }[] = [];
  let answerWorld: string[] = [];
  for (const b of await s.branches()) {
    await s.switchBranch(b.id);
    const chat = await loadChat(s);
    const calls = chat.flatMap((m) => m.parts.flatMap((p) => ("toolCallId" in p ? [p.toolCallId] : [])));
    out.push({ chat: chat.map((m) => m.id), calls, track: (await s.toolTrack()).map((t) => t.callId!) });
    if (chat.some((m) => m.id === "a")) answerWorld = [...world].sort();
  }
  return { branches: out.sort((x, y) => x.chat.join().localeCompare(y.chat.join())), answerWorld };
}

/** The loop: `first` as its first step, then p1 and p2, each step saved `{ after }` the question; tab B writes before step 0. */
async function loop(first: "put" | "lookup", tabB: (s: SessionHandle, world: Set<string>) => Promise<void>) {
  const { fp } = dbs.open();
  const world = new Set<string>();
  const s = await fp.createSession({ userId: "u" });
  const asked = await saveChat(s, [question]);
  const lookup = tool({ inputSchema: z.object({ q: z.string() }), execute: async ({ q }) => `found ${q}` });
  const steps = [[first === "put" ? put("p0", "zero") : looked], [put("p1", "one")], [put("p2", "two")]];
  const firstCall = first === "put" ? call("p0", "put", { k: "zero" }) : call("l1", "lookup", { q: "x" });
  const model = scriptedStreamModel(
    [[firstCall], [call("p1", "put", { k: "one" })], [call("p2", "put", { k: "two" })], [text("done")]],
    async (step) => {
      // Tab B writes before the first step's call; each step's answer is saved (`onStepEnd`) before the next step's call.
      if (step === 0) await tabB(s, world);
      if (step > 0 && step <= steps.length)
        await saveChat(s, [question, answer("a", steps.slice(0, step))], { after: asked.lastMessageId });
    },
  );
  const tools = { ...putTools(s, world, asked.lastMessageId), lookup };
  const result = streamText({ model, prompt: "put them", tools, stopWhen: isStepCount(8) });
  expect(await result.text).toBe("done");
  await saveChat(s, [question, answer("a", steps, true)], { after: asked.lastMessageId });
  return branchesHold(s, world);
}

it("tab B asks before the loop's first step is saved: the loop's later calls land with its first, on its answer's branch", async () => {
  expect(await loop("put", tabAsks)).toEqual({
    branches: [
      { chat: ["q", "a"], calls: ["p0", "p1", "p2"], track: ["p0", "p1", "p2"] },
      { chat: ["q", "qB", "b"], calls: ["b1"], track: ["b1"] },
    ],
    answerWorld: ["one", "two", "zero"],
  });
});

it("the same question sent again before the loop's first step is saved: the loop's calls stay together on its branch", async () => {
  expect(await loop("put", tabSendsAgain)).toEqual({
    branches: [
      { chat: ["q", "a"], calls: ["p0", "p1", "p2"], track: ["p0", "p1", "p2"] },
      { chat: ["q", "b"], calls: ["b1"], track: ["b1"] },
    ],
    answerWorld: ["one", "two", "zero"],
  });
});

it("the same question sent again before a first step of an unwrapped tool is saved: the other request's call stays off", async () => {
  expect(await loop("lookup", tabSendsAgain)).toEqual({
    branches: [
      { chat: ["q", "a"], calls: ["l1", "p1", "p2"], track: ["p1", "p2"] },
      { chat: ["q", "b"], calls: ["b1"], track: ["b1"] },
    ],
    answerWorld: ["one", "two"],
  });
});
