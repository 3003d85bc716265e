// docs/ai-sdk.md's route with the app's own call (no call id) made between the question's save and the loop, while
// another tab asks before the answer's `onEnd` save: the answer's branch holds the app's call and the loop's, so
// choosing the answer keeps exactly what it shows and what the route did for it.
import { isStepCount, streamText, tool, type UIMessage } from "ai";
import { expect, it } from "vitest";
import { z } from "zod";
import { defineTool, type SessionHandle } from "../../src/index.js";
import { loadChat, saveChat, undoableTools } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { call, scriptedStreamModel, text } from "./mock-model.js";

const dbs = tempDatabases();

const question: UIMessage = { id: "q", role: "user", parts: [{ type: "text", text: "put it" }] };
const askedB: UIMessage = { id: "qB", role: "user", parts: [{ type: "text", text: "tab B asks" }] };
const answerB: UIMessage = { id: "b", role: "assistant", parts: [{ type: "step-start" }, { type: "text", text: "B answers" }] };

/** Tab B loads the chat and asks; its answer (text only) is saved after its question. */
async function tabAsks(s: SessionHandle): Promise<void> {
  const shown = await loadChat(s);
  const asked = await saveChat(s, [...shown, askedB]);
  await saveChat(s, [...shown, askedB, answerB], { after: asked.lastMessageId });
}

type AppCall = "invoke" | "invoke without after" | "recordToolCall";

async function turn(how: AppCall, tabAsksAtStep: number) {
  const world = new Set<string>();
  const note = defineTool<{ k: string }, string>({
    name: "note",
    run: async ({ k }) => (world.add(k), k),
    undo: async ({ args }) => void world.delete(args.k),
  });
  const { fp } = dbs.open({ tools: [note] });
  const s = await fp.createSession({ userId: "u" });
  const asked = await saveChat(s, [question]);
  const after = asked.lastMessageId!;
  if (how === "invoke") await s.invoke("note", { k: "app" }, { after });
  if (how === "invoke without after") await s.invoke("note", { k: "app" });
  if (how === "recordToolCall") await s.recordToolCall({ tool: "retrieve", args: { k: "app" }, result: "docs" }, { after });
  const put = tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (world.add(k), k) });
  const tools = undoableTools(s, { put }, { put: ({ args }) => void world.delete(args.k) }, { after });
  const model = scriptedStreamModel([[call("a1", "put", { k: "one" })], [text("done")]], async (step) => {
    if (step === tabAsksAtStep) await tabAsks(s);
  });
  const result = streamText({ model, prompt: "put it", tools, stopWhen: isStepCount(4) });
  expect(await result.text).toBe("done");
  const answer: UIMessage = {
    id: "a",
    role: "assistant",
    parts: [
      { type: "step-start" },
      { type: "tool-put", toolCallId: "a1", state: "output-available", input: { k: "one" }, output: "one" },
      { type: "step-start" },
      { type: "text", text: "done" },
    ],
  };
  const saved = await saveChat(s, [question, answer], { after });
  expect((await loadChat(s)).map((m) => m.id)).toEqual(["q", "qB", "b"]);
  await s.switchBranch(saved.branchId);
  expect((await loadChat(s)).map((m) => m.id)).toEqual(["q", "a"]);
  const track = (await s.toolTrack()).map((t) => [t.tool, t.applied]);
  expect(track).toEqual([
    [how === "recordToolCall" ? "retrieve" : "note", true],
    ["put", true],
  ]);
  if (how !== "recordToolCall") expect([...world].sort()).toEqual(["app", "one"]);
  else expect([...world]).toEqual(["one"]);
}

for (const how of ["invoke", "invoke without after", "recordToolCall"] as const) {
  it(`tab B asks after the loop's call (app's call by ${how}): the answer's branch holds both calls`, async () => {
    await turn(how, 1);
  });
  it(`tab B asks before the loop's call (app's call by ${how}): the call forks with the app's call`, async () => {
    await turn(how, 0);
  });
}
