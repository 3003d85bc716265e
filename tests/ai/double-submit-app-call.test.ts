// A double submit through docs/ai-sdk.md's route, request A making the app's own call (no call id) `{ after }` the
// question before its loop: B's loop forks without A's app call, so each answer's branch holds only its request's calls.
import { isStepCount, streamText, tool, type UIMessage } from "ai";
import { expect, it } from "vitest";
import { z } from "zod";
import { defineTool, type SessionHandle } from "../../src/index.js";
import { loadChat, saveChat, undoableTools, type SaveResult } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { call, scriptedStreamModel, text } from "./mock-model.js";

const dbs = tempDatabases();

const question: UIMessage = { id: "q", role: "user", parts: [{ type: "text", text: "put it" }] };

/** The answer a request's loop shows: its call `call_0` putting `k`, then `done`. */
const answer = (id: string, k: string): UIMessage => ({
  id,
  role: "assistant",
  parts: [
    { type: "step-start" },
    { type: "tool-put", toolCallId: "call_0", state: "output-available", input: { k }, output: k },
    { type: "step-start" },
    { type: "text", text: "done" },
  ],
});

/** One request of the route: save the question, the app's call (A only), the loop, the answer saved `{ after }`. */
async function request(s: SessionHandle, world: Set<string>, tag: string, app: boolean, during?: () => Promise<void>): Promise<SaveResult> {
  const asked = await saveChat(s, [question]);
  const after = asked.lastMessageId!;
  if (app) await s.invoke("note", { k: `app${tag}` }, { after });
  const put = tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (world.add(k), k) });
  const tools = undoableTools(s, { put }, { put: ({ args }) => void world.delete(args.k) }, { after });
  const model = scriptedStreamModel([[call("call_0", "put", { k: `X${tag}` })], [text("done")]], async (step) => {
    if (step === 1) await during?.();
  });
  const result = streamText({ model, prompt: "put it", tools, stopWhen: isStepCount(4), abortSignal: new AbortController().signal });
  expect(await result.text).toBe("done");
  return saveChat(s, [question, answer(`a${tag}`, `X${tag}`)], { after });
}

it("a double submit: B's branch holds B's loop call, not A's app call made before A's loop", async () => {
  const world = new Set<string>();
  const note = defineTool<{ k: string }, string>({
    name: "note",
    run: async ({ k }) => (world.add(k), k),
    undo: async ({ args }) => void world.delete(args.k),
  });
  const { fp } = dbs.open({ tools: [note] });
  const s = await fp.createSession({ userId: "u" });
  let savedB!: SaveResult;
  const savedA = await request(s, world, "A", true, async () => {
    savedB = await request(s, world, "B", false);
  });
  expect(savedA.branchId).not.toBe(savedB.branchId);
  for (const [saved, id, calls] of [
    [savedA, "aA", ["appA", "XA"]],
    [savedB, "aB", ["XB"]],
  ] as const) {
    await s.switchBranch(saved.branchId);
    expect((await loadChat(s)).map((m) => m.id)).toEqual(["q", id]);
    expect((await s.toolTrack()).filter((t) => t.applied).map((t) => (t.args as { k: string }).k)).toEqual(calls);
    expect([...world].sort()).toEqual([...calls].sort());
  }
});
