// The AI SDK's "chatbot message persistence" flow end to end: its own chat client (AbstractChat over
// DefaultChatTransport) talking to a route handler written as the guide writes it, saveChat before and in onEnd.
import {
  convertToModelMessages,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  lastAssistantMessageIsCompleteWithToolCalls,
  isStepCount,
  streamText,
  tool,
  type ChatInit,
  type UIMessage,
} from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { Forkpoint } from "../../src/index.js";
import { loadChat, saveChat, undoableTools } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { TestChat } from "./chat-client.js";
import { call, scriptedStreamModel, text } from "./mock-model.js";

const dbs = tempDatabases();

type Step = Parameters<typeof scriptedStreamModel>[0][number];

/** An app: a key-value "world" its `put` tool writes, a client-side `confirm` tool, and the guide's route handler. */
/** How the route saves: `saveEachStep` saves in ai@7's `onStepEnd` (after each step of the loop) too, not only in `onEnd`. */
interface RouteOptions {
  generateMessageId?: () => string;
  saveEachStep?: boolean;
}

function app(fp: Forkpoint, steps: Step[], { generateMessageId, saveEachStep = false }: RouteOptions = {}) {
  const world = new Map<string, string>();
  const appTools = {
    put: tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (world.set(k, "v"), `put ${k}`) }),
    guarded_put: tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (world.set(k, "v"), `put ${k}`) }),
    confirm: tool({ inputSchema: z.object({ q: z.string() }), outputSchema: z.string() }),
  };
  const model = scriptedStreamModel(steps);
  const saves: unknown[] = [];
  const route = async (req: Request): Promise<Response> => {
    const { messages, id } = (await req.json()) as { messages: UIMessage[]; id: string };
    const s = await fp.getSession(id, { userId: "u" });
    saves.push(await saveChat(s, messages));
    const tools = undoableTools(s, appTools, {
      put: ({ args }) => void world.delete(args.k),
      guarded_put: ({ args }) => void world.delete(args.k),
    });
    const result = streamText({
      model,
      tools,
      // ai@7 asks for approval per call (a tool's own needsApproval is deprecated).
      toolApproval: { guarded_put: "user-approval" },
      messages: await convertToModelMessages(messages),
      stopWhen: isStepCount(5),
    });
    const save = async ({ messages }: { messages: UIMessage[] }) => void saves.push(await saveChat(s, messages));
    return result.toUIMessageStreamResponse({
      originalMessages: messages,
      ...(generateMessageId ? { generateMessageId } : {}),
      ...(saveEachStep ? { onStepEnd: save } : {}),
      onEnd: save,
    });
  };
  const chat = (sessionId: string, init: Omit<ChatInit<UIMessage>, "transport"> = {}) => new TestChat({ id: sessionId, route, ...init });
  return { world, chat, saves };
}

/** Resolves once the chat is idle (a tool output sent automatically starts a request of its own). */
async function settled(chat: TestChat): Promise<void> {
  while (chat.status === "submitted" || chat.status === "streaming") await new Promise((r) => setImmediate(r));
}

describe("the AI SDK's chat client and the guide's route handler", () => {
  it("server without generateMessageId: the client's own ids for answers are not edits (no branch, no duplicate)", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const { chat, world } = app(fp, [[call("p1", "put", { k: "a" })], [text("put a")], [call("p2", "put", { k: "b" })], [text("put b")]]);
    const client = chat(s.id);
    await client.sendMessage({ text: "put a" });
    await client.sendMessage({ text: "put b" });
    expect(await s.branches()).toHaveLength(1);
    expect((await s.history()).map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant"]);
    expect([...world.keys()]).toEqual(["a", "b"]);
    expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["p1", "p2"]);
    // The client's list, ids and all, saved again: nothing changes.
    expect(await saveChat(s, client.messages)).toMatchObject({ kept: 4, forked: null, continued: false, appended: 0 });
    expect((await loadChat(s)).map((m) => m.parts)).toEqual(client.messages.map((m) => m.parts));
  });

  it("a client-side tool's output continues the answer: no new version, the continuation's tool effects stay", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const { chat, world } = app(fp, [
      [call("p1", "put", { k: "a" })],
      [call("c1", "confirm", { q: "go on?" })],
      [call("p2", "put", { k: "b" })],
      [text("both put")],
    ]);
    const client = chat(s.id, { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls });
    await client.sendMessage({ text: "put a, ask, put b" });
    expect(client.lastMessage!.parts.at(-1)).toMatchObject({ type: "tool-confirm", state: "input-available" });
    await client.addToolOutput({ tool: "confirm", toolCallId: "c1", output: "yes" });
    await settled(client);
    expect(client.lastMessage!.parts.filter((p) => p.type.startsWith("tool-")).map((p) => (p as { state: string }).state)).toEqual([
      "output-available",
      "output-available",
      "output-available",
    ]);
    // One branch, both puts in the world and on the track: the answer grew, nothing was forked or undone.
    expect(await s.branches()).toHaveLength(1);
    expect([...world.keys()]).toEqual(["a", "b"]);
    expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["p1", "p2"]);
    const loaded = await loadChat(s);
    expect(loaded.map((m) => m.parts)).toEqual(client.messages.map((m) => m.parts));
    expect(loaded[1]!.id).toBe(client.messages[1]!.id);
    expect(await saveChat(s, client.messages)).toMatchObject({ kept: 2, forked: null, appended: 0 });
    // The longer forms are entries of their own (nothing is rewritten); the answer has one version.
    const answer = (await s.history()).at(-1)!;
    expect((await s.versions(answer.id)).count).toBe(1);
  });

  it("an approved tool runs in the continuation and stays applied; a regenerate then undoes it", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const { chat, world } = app(fp, [[call("g1", "guarded_put", { k: "a" })], [text("put a after approval")], [text("regenerated")]], {
      generateMessageId: (() => {
        let n = 0;
        return () => `srv-${++n}`;
      })(),
    });
    const client = chat(s.id, { sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses });
    await client.sendMessage({ text: "put a" });
    const request = client.lastMessage!.parts.find((p) => p.type === "tool-guarded_put") as { approval: { id: string } };
    expect(world.size).toBe(0);
    await client.addToolApprovalResponse({ id: request.approval.id, approved: true });
    await settled(client);
    expect([...world.keys()]).toEqual(["a"]);
    expect(await s.branches()).toHaveLength(1);
    expect((await s.toolTrack()).map((t) => [t.callId, t.status])).toEqual([["g1", "succeeded"]]);
    expect((await loadChat(s)).map((m) => m.id)).toEqual(client.messages.map((m) => m.id));

    // Regenerate drops the whole answer (every form of it): the approved call is undone with it.
    await client.regenerate();
    expect(world.size).toBe(0);
    expect((await loadChat(s)).map((m) => m.parts.at(-1))).toEqual(client.messages.map((m) => m.parts.at(-1)));
    expect((client.lastMessage!.parts.at(-1) as { text: string }).text).toBe("regenerated");
  });

  it("regenerate and edit from the client become versions: < 2/2 > of the answer, of the question", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const { chat } = app(fp, [[text("first answer")], [text("second answer")], [text("answer to the edit")]]);
    const client = chat(s.id);
    await client.sendMessage({ text: "hello" });
    await client.regenerate();
    const answer = (await s.history())[1]!;
    const v = await s.versions(answer.id);
    expect([v.index + 1, v.count]).toEqual([2, 2]);
    expect(v.versions.map((x) => (x.message.content as Array<{ text?: string }>).at(-1)!.text)).toEqual(["first answer", "second answer"]);

    // An edit: the client resends the question under its id with new text (the answers after it dropped).
    await client.sendMessage({ text: "hello again", messageId: client.messages[0]!.id });
    expect((await loadChat(s)).map((m) => (m.parts.at(-1) as { text: string }).text)).toEqual(["hello again", "answer to the edit"]);
    const question = (await s.history())[0]!;
    const q = await s.versions(question.id);
    expect([q.index + 1, q.count]).toEqual([2, 2]);
    expect(await s.branches()).toHaveLength(3);
  });

  it("saved after every step (onStepEnd) and at the end (onEnd), a multi-step answer is one message, its calls kept", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const { chat, world, saves } = app(
      fp,
      [[call("p1", "put", { k: "a" })], [call("p2", "put", { k: "b" })], [text("put both")], [text("again")]],
      { saveEachStep: true },
    );
    const client = chat(s.id);
    await client.sendMessage({ text: "put a and b" });
    // The request's save, one per step (three), the end's: the answer grew step by step, never forked.
    expect(saves).toHaveLength(5);
    expect(saves.map((r) => (r as { forked: unknown }).forked)).toEqual([null, null, null, null, null]);
    expect(await s.branches()).toHaveLength(1);
    expect([...world.keys()]).toEqual(["a", "b"]);
    expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["p1", "p2"]);
    expect((await loadChat(s)).map((m) => m.parts)).toEqual(client.messages.map((m) => m.parts));
    expect((await s.versions((await s.history()).at(-1)!.id)).count).toBe(1);
    // A regenerate drops the whole answer, every step of it: both calls are undone.
    await client.regenerate();
    expect(world.size).toBe(0);
    expect((client.lastMessage!.parts.at(-1) as { text: string }).text).toBe("again");
  });

  it("a list whose ids the client renamed is the same chat: nothing forked, no tool call undone", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const { chat, world } = app(fp, [[call("p1", "put", { k: "a" })], [text("put a")], [text("ok")]]);
    const client = chat(s.id);
    await client.sendMessage({ text: "put a" });
    await client.sendMessage({ text: "thanks" });
    const renamed = client.messages.map((m, i) => ({ ...m, id: `renamed-${i}` }));
    expect(await saveChat(s, renamed)).toMatchObject({ kept: 4, forked: null, continued: false, appended: 0 });
    expect([...world.keys()]).toEqual(["a"]);
    expect(await s.branches()).toHaveLength(1);
  });
});
