// The AI SDK chat client and the guide's route where the session is not what the client holds: a copy of the chat
// (clone, handoff) read back, a stale tab's list, a thumbs-up on an earlier answer, a rollback the model made.
import {
  convertToModelMessages,
  createIdGenerator,
  generateText,
  isStepCount,
  streamText,
  tool,
  type ModelMessage,
  type UIMessage,
} from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { Forkpoint } from "../../src/index.js";
import { ConflictError, type SessionHandle } from "../../src/index.js";
import { aiCheckpointTools, loadChat, loadModelMessages, saveChat, saveModelMessages, undoableTools } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { TestChat } from "./chat-client.js";
import { call, scriptedModel, scriptedStreamModel, text } from "./mock-model.js";

const dbs = tempDatabases();

type Step = Parameters<typeof scriptedStreamModel>[0][number];

/**
 * An app whose `put` writes a key of its world (undone by deleting it) and `send` needs the user's approval; its route is
 * the guide's: the client may send `at`, the branch it last saw, for `ifAt`; a save refused because the session moved
 * (`SESSION_MOVED`) is a 409 with the code, so the page loads the chat again.
 */
function app(fp: Forkpoint, steps: Step[], { checkpointTools = false } = {}) {
  const world = new Set<string>();
  const appTools = {
    put: tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (world.add(k), k) }),
    send: tool({ inputSchema: z.object({ to: z.string() }), execute: async ({ to }) => `sent to ${to}` }),
  };
  const model = scriptedStreamModel(steps);
  const route = async (req: Request): Promise<Response> => {
    const { id, messages, at } = (await req.json()) as { id: string; messages: UIMessage[]; at?: string };
    const s = await fp.getSession(id, { userId: "u" });
    let asked;
    try {
      asked = await saveChat(s, messages, at ? { ifAt: { branchId: at } } : {});
    } catch (error) {
      if (error instanceof ConflictError && error.code === "SESSION_MOVED") return Response.json({ code: error.code }, { status: 409 });
      throw error;
    }
    const result = streamText({
      model,
      messages: await convertToModelMessages(messages),
      tools: {
        ...undoableTools(s, appTools, { put: ({ args }) => void world.delete(args.k) }, { after: asked.lastMessageId }),
        ...(checkpointTools ? aiCheckpointTools(s) : {}),
      },
      toolApproval: { send: "user-approval" },
      stopWhen: isStepCount(5),
    });
    return result.toUIMessageStreamResponse({
      originalMessages: messages,
      generateMessageId: createIdGenerator({ prefix: "msg", size: 16 }),
      // The branch the question is on, for the page's next `at`.
      messageMetadata: () => ({ branchId: asked.branchId }),
      onEnd: async ({ messages: all }) => void (await saveChat(s, all, { after: asked.lastMessageId })),
    });
  };
  const chat = (sessionId: string, messages: UIMessage[] = []) => new TestChat({ id: sessionId, route, messages });
  return { world, chat };
}

const words = (m: UIMessage) =>
  m.parts
    .map((p) => (p.type === "text" ? p.text : p.type.startsWith("tool-") ? `[${p.type}:${(p as { state: string }).state}]` : ""))
    .join("");

describe("copies of an AI SDK chat", () => {
  it("clone and handoff keep an answer that went on (a tool approval) as one message", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const { chat } = app(fp, [[call("s1", "send", { to: "bob" })], [text("sent to bob")]]);
    const client = chat(s.id);
    await client.sendMessage({ text: "mail bob" });
    const part = client.messages[1]!.parts.find((p) => p.type === "tool-send") as { approval: { id: string } };
    await client.addToolApprovalResponse({ id: part.approval.id, approved: true });
    await client.sendMessage();
    // The answer was stored three times as it grew, and is read as one.
    expect((await s.history()).length).toBe(4);
    const chatNow = (await loadChat(s)).map(words);
    expect(chatNow).toEqual(["mail bob", "[tool-send:output-available]sent to bob"]);
    const cp = await s.checkpoint({ name: "end" });

    const copy = await fp.clone(s.id, { userId: "u" });
    expect((await loadChat(copy)).map(words)).toEqual(chatNow);
    const handed = await s.handoff(cp.id, { userId: "v" });
    expect((await loadChat(handed)).map(words)).toEqual(chatNow);
    // Each copy's later forms name the copy's own entries, and its hash chain holds.
    for (const c of [copy, handed]) {
      const ids = new Set((await c.history()).map((m) => m.id));
      for (const m of await c.history()) if (typeof m.metadata?.continues === "string") expect(ids.has(m.metadata.continues)).toBe(true);
      expect((await fp.verify({ sessionId: c.id })).ok).toBe(true);
    }
    // The copy goes on as a chat of its own: the client's list of it is its history, nothing forked.
    const { chat: copyChat } = app(fp, [[text("answer on the copy")]]);
    const again = copyChat(copy.id, await loadChat(copy));
    await again.sendMessage({ text: "and carol?" });
    expect(await copy.branches()).toHaveLength(1);
    expect((await loadChat(copy)).map(words)).toEqual([...chatNow, "and carol?", "answer on the copy"]);
  });
});

/** What the session holds: its current conversation, its branches, the calls on its current track. */
async function snapshot(s: SessionHandle) {
  return {
    chat: (await loadChat(s)).map(words),
    branches: (await s.branches()).length,
    track: (await s.toolTrack()).map((t) => t.callId),
    entries: (await s.history()).map((m) => m.id),
  };
}

const q = (id: string, t: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text: t }] });
const a = (id: string, t: string): UIMessage => ({ id, role: "assistant", parts: [{ type: "text", text: t }] });

const steps4: Step[] = [
  [call("c1", "put", { k: "a" })],
  [text("put a")],
  [call("c2", "put", { k: "b" })],
  [text("put b")],
  [text("third answer")],
];

describe("a client list the session moved away from", () => {
  it("saveChat takes ifAt: a tab sending with the branch it saw is refused once another tab moved the chat", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await saveChat(s, [{ id: "q1", role: "user", parts: [{ type: "text", text: "hi" }] }]);
    const seen = (await s.info()).currentBranchId;
    const cp = await s.checkpoint({ name: "at hi" });
    const list: UIMessage[] = [
      { id: "q1", role: "user", parts: [{ type: "text", text: "hi" }] },
      { id: "a1", role: "assistant", parts: [{ type: "text", text: "hello" }] },
    ];
    // While the session is where the tab saw it, the save runs (and a head given must match too).
    const head = (await s.summary()).position;
    expect(await saveChat(s, list, { ifAt: { branchId: seen, head } })).toMatchObject({ appended: 1, branchId: seen });
    const other = await fp.getSession(s.id, { userId: "u" });
    await other.rollback(cp.id);
    const before = await snapshot(s);
    for (const options of [{ ifAt: { branchId: seen } }, { ifAt: { branchId: seen }, after: (await s.history())[0]!.id }]) {
      const refused = await saveChat(s, [...list, { id: "q2", role: "user", parts: [{ type: "text", text: "and?" }] }], options).catch(
        (e) => e,
      );
      expect(refused).toBeInstanceOf(ConflictError);
      expect(refused.code).toBe("SESSION_MOVED");
    }
    await expect(saveChat(s, list, { ifAt: { branchId: "" } })).rejects.toMatchObject({ code: "VALIDATION_ERROR", field: "ifAt.branchId" });
    expect(await snapshot(s)).toEqual(before);
  });

  it("another tab rolled back: the stale tab's next question is refused, nothing copied; loaded again it goes on", async () => {
    for (const withAt of [false, true]) {
      const { fp } = dbs.open();
      const s = await fp.createSession({ userId: "u" });
      const { world, chat } = app(fp, steps4);
      const tabA = chat(s.id);
      await tabA.sendMessage({ text: "put a" }, withAt ? { body: { at: (await s.info()).currentBranchId } } : undefined);
      const cp = await s.checkpoint({ name: "after the first answer" });
      const at = () => (withAt ? { body: { at: (tabA.lastMessage!.metadata as { branchId: string }).branchId } } : undefined);
      await tabA.sendMessage({ text: "put b" }, at());
      await (await fp.getSession(s.id, { userId: "u" })).rollback(cp.id);
      const rolledBack = await snapshot(s);
      expect(rolledBack.track).toEqual(["c1"]);
      expect([...world]).toEqual(["a"]);
      await tabA.sendMessage({ text: "third" }, at());
      expect(tabA.error?.message).toContain("SESSION_MOVED");
      expect(await snapshot(s)).toEqual(rolledBack);
      expect([...world]).toEqual(["a"]);
      // The page loads the chat again and asks from there.
      const reloaded = chat(s.id, await loadChat(s));
      await reloaded.sendMessage({ text: "third" });
      expect((await loadChat(s)).map(words)).toEqual(["put a", "[tool-put:output-available]put a", "third", "third answer"]);
      expect((await snapshot(s)).track).toEqual(["c1"]);
    }
  });

  it("another tab edited a question or picked another version: the stale tab's list is refused; an edit is not", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const q = (id: string, t: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text: t }] });
    const a = (id: string, t: string): UIMessage => ({ id, role: "assistant", parts: [{ type: "text", text: t }] });
    const tabA = [q("q1", "one?"), a("a1", "one."), q("q2", "two?"), a("a2", "two.")];
    await saveChat(s, tabA);
    const root = (await s.info()).currentBranchId;
    // Tab B edits q2 (useChat's edit keeps the message's id): a new version, the old one and its answer on the root.
    expect(await saveChat(s, [...tabA.slice(0, 2), q("q2", "two, really?")])).toMatchObject({ forked: "edit" });
    const edited = await snapshot(s);
    // Tab A, still showing the old q2 and its answer, asks on: refused, nothing written.
    await expect(saveChat(s, [...tabA, q("q3", "three?")])).rejects.toMatchObject({ code: "SESSION_MOVED" });
    expect(await snapshot(s)).toEqual(edited);
    // Tab B edits q2 again: its id is on the current branch too, so this is an edit, not a stale copy.
    expect(await saveChat(s, [...tabA.slice(0, 2), q("q2", "two, at last?")])).toMatchObject({ forked: "edit" });
    await saveChat(s, [...tabA.slice(0, 2), q("q2", "two, at last?"), a("a2b", "two at last.")]);
    // Tab B picks the first version again; a tab showing the last one asks on: refused.
    const last = await loadChat(s);
    await s.switchBranch(root);
    await expect(saveChat(s, [...last, q("q4", "four?")])).rejects.toMatchObject({ code: "SESSION_MOVED" });
    // The tab showing the first version asks on: appended.
    expect(await saveChat(s, [...tabA, q("q3", "three?")])).toMatchObject({ appended: 1, forked: null });
  });

  it("a model reusing call ids (call_0 per response): a regenerated answer saved without `after` is no stale copy", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const world = new Set<string>();
    const put = tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (world.add(k), k) });
    const model = scriptedStreamModel([
      [call("call_0", "put", { k: "a" })],
      [text("put a")],
      [call("call_0", "put", { k: "b" })],
      [text("put b")],
    ]);
    // A route that saves the request's messages, then the whole list in onEnd without `after`.
    const route = async (req: Request): Promise<Response> => {
      const { messages } = (await req.json()) as { messages: UIMessage[] };
      await saveChat(s, messages);
      const result = streamText({
        model,
        messages: await convertToModelMessages(messages),
        tools: undoableTools(s, { put }, { put: ({ args }) => void world.delete(args.k) }),
        stopWhen: isStepCount(5),
      });
      return result.toUIMessageStreamResponse({
        originalMessages: messages,
        generateMessageId: createIdGenerator({ prefix: "msg", size: 16 }),
        onEnd: async ({ messages: all }) => void (await saveChat(s, all)),
      });
    };
    const client = new TestChat({ id: s.id, route });
    await client.sendMessage({ text: "put something" });
    await client.regenerate();
    expect(client.error).toBeUndefined();
    expect((await loadChat(s)).map(words)).toEqual(["put something", "[tool-put:output-available]put b"]);
    expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["call_0"]);
    expect([...world]).toEqual(["b"]);
  });

  it("saveModelMessages refuses a stale list as saveChat does: its calls (tool-call, tool-result) only on another branch", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const world = new Set<string>();
    const put = tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (world.add(k), k) });
    const messages: ModelMessage[] = [{ role: "user", content: "put a" }];
    await saveModelMessages(s, messages);
    const cp = await s.checkpoint({ name: "asked" });
    const result = await generateText({
      model: scriptedModel([[call("call-1", "put", { k: "a" })], [text("put a")]]),
      tools: undoableTools(s, { put }, { put: ({ args }) => void world.delete(args.k) }),
      messages,
      stopWhen: isStepCount(5),
    });
    messages.push(...result.responseMessages);
    await saveModelMessages(s, messages);
    await (await fp.getSession(s.id, { userId: "u" })).rollback(cp.id);
    const rolledBack = await snapshot(s);
    // The script still holds the list of the turn rolled back: asked on, its copy of that turn is refused.
    await expect(saveModelMessages(s, [...messages, { role: "user", content: "thanks" }])).rejects.toMatchObject({ code: "SESSION_MOVED" });
    expect(await snapshot(s)).toEqual(rolledBack);
    expect([...world]).toEqual([]);
    // From the history as it is, it goes on.
    expect(await saveModelMessages(s, [...(await loadModelMessages(s)), { role: "user", content: "thanks" }])).toMatchObject({
      appended: 1,
    });
  });

  it("a model reusing call ids, tools not wrapped: regenerated answers naming call_0 again are versions, copies refused", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const question = q("q", "weather?");
    const answer = (id: string, city: string, says = `sunny in ${city}`): UIMessage => ({
      id,
      role: "assistant",
      parts: [
        { type: "tool-weather", toolCallId: "call_0", state: "output-available", input: { city }, output: "sunny" },
        { type: "text", text: says },
      ],
    });
    expect(await saveChat(s, [question, answer("a1", "Paris")])).toMatchObject({ appended: 2 });
    expect(await saveChat(s, [question, a("a2", "I don't know")])).toMatchObject({ forked: "edit" });
    // A tab still showing the first answer asks on: refused by its id; renamed, by its call (same input, same parts).
    const moved = await snapshot(s);
    await expect(saveChat(s, [question, answer("a1", "Paris"), q("q2", "and?")])).rejects.toMatchObject({ code: "SESSION_MOVED" });
    await expect(saveChat(s, [question, answer("renamed", "Paris"), q("q2", "and?")])).rejects.toMatchObject({ code: "SESSION_MOVED" });
    expect(await snapshot(s)).toEqual(moved);
    // Another input under call_0: another call, a new version.
    expect(await saveChat(s, [question, answer("a3", "Lyon")])).toMatchObject({ forked: "edit" });
    expect(await saveChat(s, [question, a("a4", "Still no idea")])).toMatchObject({ forked: "edit" });
    // The same input, in a new message that says otherwise: a new answer making the same call again.
    expect(await saveChat(s, [question, answer("a5", "Paris", "Paris: sunny")])).toMatchObject({ forked: "edit" });
    expect((await s.versions((await s.history()).at(-1)!.id)).count).toBe(5);
  });

  it("a thumbs-up on an earlier answer (its metadata only) forks nothing and undoes no call", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const { world, chat } = app(fp, steps4);
    const client = chat(s.id);
    await client.sendMessage({ text: "put a" });
    await client.sendMessage({ text: "put b" });
    const messages = client.messages;
    client.messages = messages.map((m, i) => (i === 1 ? { ...m, metadata: { ...(m.metadata as object), feedback: "up" } } : m));
    await client.sendMessage({ text: "third" });
    expect(client.error).toBeUndefined();
    expect(await s.branches()).toHaveLength(1);
    expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["c1", "c2"]);
    expect([...world].sort()).toEqual(["a", "b"]);
    expect((await loadChat(s)).map(words)).toEqual([
      "put a",
      "[tool-put:output-available]put a",
      "put b",
      "[tool-put:output-available]put b",
      "third",
      "third answer",
    ]);
  });

  it("the model rolled back (aiCheckpointTools): the next request's copy of the undone turn is refused", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    let checkpointId = "";
    const rollback = {
      type: "tool-call" as const,
      toolCallId: "r1",
      toolName: "rollback",
      get input() {
        return JSON.stringify({ checkpointId });
      },
    };
    const { world, chat } = app(
      fp,
      [
        [call("c1", "put", { k: "a" })],
        [text("put a")],
        [call("c2", "put", { k: "b" })],
        [rollback as unknown as Step[number]],
        [text("rolled back")],
        [text("third answer")],
      ],
      { checkpointTools: true },
    );
    const client = chat(s.id);
    await client.sendMessage({ text: "put a" });
    checkpointId = (await s.checkpoint({ name: "after a" })).id;
    await client.sendMessage({ text: "put b, then roll back" });
    const rolledBack = await snapshot(s);
    expect(rolledBack).toMatchObject({ chat: ["put a", "[tool-put:output-available]put a"], track: ["c1"] });
    expect([...world]).toEqual(["a"]);
    await client.sendMessage({ text: "third" });
    expect(client.error?.message).toContain("SESSION_MOVED");
    expect(await snapshot(s)).toEqual(rolledBack);
    // A list renamed on the client (its answers' ids not the server's) is known by its tool calls.
    const renamed = client.messages.slice(0, 4).map((m, i) => (i === 3 ? { ...m, id: "renamed" } : m));
    await expect(saveChat(s, [...renamed.slice(0, 2), renamed[3]!])).rejects.toMatchObject({ code: "SESSION_MOVED" });
    expect(await snapshot(s)).toEqual(rolledBack);
  });
});
