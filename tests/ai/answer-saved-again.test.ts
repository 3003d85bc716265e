// The route handler of docs/ai-sdk.md (saveChat before the loop, the answer saved `after` its question) when a save
// meets an answer stored already: a regenerated answer equal to the old one, a step's earlier form, a request sent twice.
import { convertToModelMessages, createIdGenerator, isStepCount, streamText, tool, type UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { Forkpoint, SessionHandle } from "../../src/index.js";
import { loadChat, saveChat, undoableTools, type SaveResult } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { call, scriptedStreamModel, text } from "./mock-model.js";

const dbs = tempDatabases();

type Step = Parameters<typeof scriptedStreamModel>[0][number];

interface RouteOptions {
  /** Server-side ids for answers (`generateMessageId`), as the docs' route gives them; absent: the client names them. */
  serverIds?: boolean;
  /** Saves in `onStepEnd` too (after each step), not only in `onEnd`. */
  saveEachStep?: boolean;
  /** Runs before model step `step` (another tab moving the session while the answer streams). */
  beforeStep?: (step: number) => Promise<void>;
  /** What `send` waits for once it has started (a slow tool). */
  sending?: Promise<void>;
  /** What the first save waits for before it reads (a slow save). */
  firstSave?: Promise<void>;
}

/** An app whose `put` writes a key of its world (undone by deleting it) and `send` needs the user's approval. */
function app(fp: Forkpoint, steps: Step[], { serverIds = true, saveEachStep = false, beforeStep, sending, firstSave }: RouteOptions = {}) {
  const world = new Set<string>();
  let sends = 0;
  const appTools = {
    put: tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (world.add(k), k) }),
    send: tool({
      inputSchema: z.object({ to: z.string() }),
      execute: async ({ to }) => {
        sends++;
        await sending;
        return `sent to ${to}`;
      },
    }),
  };
  const model = scriptedStreamModel(steps, beforeStep);
  const saves: SaveResult[] = [];
  const post = async (sessionId: string, body: string): Promise<string> => {
    const { messages } = JSON.parse(body) as { messages: UIMessage[] };
    const s = await fp.getSession(sessionId, { userId: "u" });
    const asked = await saveChat(s, messages);
    const result = streamText({
      model,
      messages: await convertToModelMessages(messages),
      tools: undoableTools(s, appTools, { put: ({ args }) => void world.delete(args.k) }, { after: asked.lastMessageId }),
      toolApproval: { send: "user-approval" },
      stopWhen: isStepCount(5),
    });
    let first = true;
    const save = async ({ messages: all }: { messages: UIMessage[] }) => {
      if (first) await firstSave;
      first = false;
      saves.push(await saveChat(s, all, { after: asked.lastMessageId }));
    };
    return result
      .toUIMessageStreamResponse({
        originalMessages: messages,
        ...(serverIds ? { generateMessageId: createIdGenerator({ prefix: "msg", size: 16 }) } : {}),
        ...(saveEachStep ? { onStepEnd: save } : {}),
        onEnd: save,
      })
      .text();
  };
  const send = (s: SessionHandle, messages: UIMessage[]) => post(s.id, JSON.stringify({ messages }));
  return { world, sends: () => sends, saves, post, send };
}

const question: UIMessage = { id: "q", role: "user", parts: [{ type: "text", text: "is it?" }] };
const words = (m: UIMessage) => m.parts.map((p) => (p.type === "text" ? p.text : "")).join("");

describe("an answer saved after its question, meeting one stored already", () => {
  for (const serverIds of [true, false]) {
    it(`a regenerated answer equal to the old one is a < 2/2 > version (${serverIds ? "server" : "client"} ids)`, async () => {
      const { fp } = dbs.open();
      const s = await fp.createSession({ userId: "u" });
      const { send, saves } = app(fp, [[text("Yes.")], [text("Yes.")]], { serverIds });
      await send(s, [question]);
      const first = (await s.history()).at(-1)!;
      await send(s, [question]); // regenerate: the messages before the answer
      const chat = await loadChat(s);
      expect(chat.map(words)).toEqual(["is it?", "Yes."]);
      const answer = (await s.history()).at(-1)!;
      expect(answer.id).not.toBe(first.id);
      expect(saves.at(-1)).toMatchObject({ appended: 1, lastMessageId: answer.id, branchId: (await s.info()).currentBranchId });
      const v = await s.versions(answer.id);
      expect([v.index + 1, v.count]).toEqual([2, 2]);
      // The same list saved once more (a double save): stored once.
      expect(await saveChat(s, [question, chat[1]!], { after: (await s.history())[0]!.id })).toMatchObject({
        appended: 0,
        lastMessageId: answer.id,
      });
      expect((await s.history()).map((m) => m.id)).toEqual([(await s.history())[0]!.id, answer.id]);
    });
  }

  for (const serverIds of [true, false]) {
    it(`saved after each step, the answer grows on its own branch (${serverIds ? "server" : "client"} ids)`, async () => {
      const { fp } = dbs.open();
      const s = await fp.createSession({ userId: "u" });
      const { send, saves, world } = app(fp, [[call("c1", "put", { k: "one" })], [text("put one")]], { serverIds, saveEachStep: true });
      await send(s, [question]);
      expect(saves.map((r) => [r.appended, r.continued])).toEqual([
        [1, false],
        [1, true],
        [0, false],
      ]);
      expect(await s.branches()).toHaveLength(1);
      const chat = await loadChat(s);
      expect(chat.map((m) => m.parts.map((p) => p.type))).toEqual([["text"], ["step-start", "tool-put", "step-start", "text"]]);
      expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["c1"]);
      expect([...world]).toEqual(["one"]);
    });
  }

  it("another tab rolls back to the question mid-answer: the next step's form goes on where its calls are", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const tab2 = await fp.getSession(s.id, { userId: "u" });
    let atQuestion = "";
    const { send, saves } = app(fp, [[call("c1", "put", { k: "one" })], [text("put one")]], {
      saveEachStep: true,
      beforeStep: async (step) => {
        if (step === 1) await tab2.rollback(atQuestion);
      },
    });
    await saveChat(s, [question]);
    atQuestion = (await s.checkpoint({ name: "at the question" })).id;
    await send(s, [question]);
    const rolledBack = (await s.info()).currentBranchId;
    expect((await loadChat(s)).map(words)).toEqual(["is it?"]);
    // The step's save went on from the first step's form, on the branch holding c1; the end's save stored nothing.
    expect(saves.map((r) => [r.appended, r.continued])).toEqual([
      [1, false],
      [1, true],
      [0, false],
    ]);
    const answered = saves[1]!.branchId;
    expect(answered).not.toBe(rolledBack);
    expect(saves.map((r) => r.branchId)).toEqual([answered, answered, answered]);
    await s.switchBranch(answered);
    const chat = await loadChat(s);
    expect(chat.map((m) => m.parts.map((p) => p.type))).toEqual([["text"], ["step-start", "tool-put", "step-start", "text"]]);
    expect(await s.history({ branchId: rolledBack })).toHaveLength(1);
  });

  for (const tab of [true, false])
    it(`saved after each step, a later step's call lands with the answer (${tab ? "another tab posts mid-answer" : "alone"})`, async () => {
      const { fp } = dbs.open();
      const s = await fp.createSession({ userId: "u" });
      const tab2 = await fp.getSession(s.id, { userId: "u" });
      const steps = [[call("c1", "put", { k: "one" })], [call("c2", "put", { k: "two" })], [text("put both")]];
      let saving!: () => void;
      const a = app(fp, steps, {
        saveEachStep: true,
        firstSave: new Promise<void>((resolve) => (saving = resolve)),
        beforeStep: async (step) => {
          if (step !== 1) return;
          // Another tab's message lands before the first step's form (after it, that tab's list would be an edit).
          if (tab) await saveChat(tab2, [question, { id: "q2", role: "user", parts: [{ type: "text", text: "and?" }] }]);
          saving();
          // The first step's form is stored before the next step's call.
          while (a.saves.length < 1) await new Promise((resolve) => setTimeout(resolve, 5));
        },
      });
      await a.send(s, [question]);
      const answered = a.saves.at(-1)!.branchId;
      expect(a.saves.map((r) => r.branchId)).toEqual(a.saves.map(() => answered));
      expect((await s.toolTrack({ branchId: answered })).map((t) => t.callId)).toEqual(["c1", "c2"]);
      expect(await s.branches()).toHaveLength(tab ? 2 : 1);
      await s.switchBranch(answered);
      expect([...a.world].sort()).toEqual(["one", "two"]);
      const chat = await loadChat(s);
      expect(chat.map(words)).toEqual(["is it?", "put both"]);
      expect(chat[1]!.parts.filter((p) => p.type === "tool-put")).toHaveLength(2);
    });

  for (const serverIds of [true, false]) {
    it(`a tool approval POSTed twice runs the tool once and stores once (${serverIds ? "server" : "client"} ids)`, async () => {
      const { fp } = dbs.open();
      const s = await fp.createSession({ userId: "u" });
      const { send, post, sends } = app(fp, [[call("g1", "send", { to: "bob" })], [text("Sent.")], [text("Sent.")]], { serverIds });
      await send(s, [question]);
      const chat = await loadChat(s);
      const part = chat[1]!.parts.find((p) => p.type === "tool-send") as { state: string; approval: { id: string; approved?: boolean } };
      expect(part.state).toBe("approval-requested");
      part.state = "approval-responded";
      part.approval = { ...part.approval, approved: true };
      const body = JSON.stringify({ messages: chat });
      await post(s.id, body);
      const once = await loadChat(s);
      const history = (await s.history()).map((m) => m.id);
      expect(sends()).toBe(1);
      await post(s.id, body); // the same request again: a double submit, a retry after a dropped connection
      expect(sends()).toBe(1);
      expect(await s.branches()).toHaveLength(1);
      expect((await s.toolTrack()).map((t) => [t.callId, t.status])).toEqual([["g1", "succeeded"]]);
      expect((await s.history()).map((m) => m.id)).toEqual(history);
      expect(await loadChat(s)).toEqual(once);
      expect(words(once[1]!)).toBe("Sent.");
    });
  }

  it("a tool approval POSTed twice, saved after each step, runs each call once and stores once", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const put = call("p1", "put", { k: "one" });
    const steps = [[call("g1", "send", { to: "bob" })], [put], [text("Sent.")], [put], [text("Sent.")]];
    const { send, post, sends, world } = app(fp, steps, { saveEachStep: true });
    await send(s, [question]);
    const chat = await loadChat(s);
    const part = chat[1]!.parts.find((p) => p.type === "tool-send") as { state: string; approval: { id: string; approved?: boolean } };
    part.state = "approval-responded";
    part.approval = { ...part.approval, approved: true };
    const body = JSON.stringify({ messages: chat });
    await post(s.id, body);
    const once = await loadChat(s);
    const history = (await s.history()).map((m) => m.id);
    world.clear();
    await post(s.id, body); // the same request again: its later step's call follows the answer's stored form now
    expect(sends()).toBe(1);
    expect([...world]).toEqual([]);
    // Its steps' forms are the stored answer's earlier forms: nothing is written, no copy of the answer forked.
    expect(await s.branches()).toHaveLength(1);
    expect((await s.history()).map((m) => m.id)).toEqual(history);
    expect((await s.toolTrack()).map((t) => [t.callId, t.status])).toEqual([
      ["g1", "succeeded"],
      ["p1", "succeeded"],
    ]);
    expect(await loadChat(s)).toEqual(once);
    expect(words(once[1]!)).toBe("Sent.");
  });

  it("a tool approval POSTed twice at once runs the tool once: the second request waits for its result", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    let sent!: () => void;
    const sending = new Promise<void>((resolve) => (sent = resolve));
    const { send, post, sends } = app(fp, [[call("g1", "send", { to: "bob" })], [text("Sent.")], [text("Sent.")]], { sending });
    await send(s, [question]);
    const chat = await loadChat(s);
    const part = chat[1]!.parts.find((p) => p.type === "tool-send") as { state: string; approval: { id: string; approved?: boolean } };
    part.state = "approval-responded";
    part.approval = { ...part.approval, approved: true };
    const body = JSON.stringify({ messages: chat });
    const both = Promise.all([post(s.id, body), post(s.id, body)]);
    while (sends() === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    await new Promise((resolve) => setTimeout(resolve, 50)); // the other request meets the call running
    sent();
    // Both responses answer with the tool's result, and no error form of the answer is stored.
    for (const body of await both) expect(body).toContain('"type":"tool-output-available"');
    expect(JSON.stringify(await s.history())).not.toContain("output-error");
    expect(sends()).toBe(1);
    expect(await s.branches()).toHaveLength(1);
    expect((await s.toolTrack()).map((t) => [t.callId, t.status])).toEqual([["g1", "succeeded"]]);
    const answer = (await loadChat(s))[1]!;
    expect(answer.parts.find((p) => p.type === "tool-send")).toMatchObject({ state: "output-available", output: "sent to bob" });
    expect(words(answer)).toBe("Sent.");
  });
});

// Review 21: a regenerated answer equal to an earlier form of the old one (its first step: a client-side tool's call,
// a model numbering its calls per response) has a place of its own: it is stored there, as a version.
describe("a regenerated answer equal to the old answer's first form", () => {
  it("is stored on the regenerate's branch as a version, not taken for the old answer", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const q: UIMessage = { id: "q", role: "user", parts: [{ type: "text", text: "pick a colour" }] };
    // No ids to tell answers apart (the client sends none, the server gives none): only the call ids, which repeat.
    const asking = (output?: string): UIMessage => ({
      id: "",
      role: "assistant",
      parts: [
        { type: "step-start" },
        output === undefined
          ? { type: "tool-ask", toolCallId: "call_0", state: "input-available", input: {} }
          : { type: "tool-ask", toolCallId: "call_0", state: "output-available", input: {}, output },
        ...(output === undefined
          ? []
          : [{ type: "step-start" } as const, { type: "text", text: `${output} it is`, state: "done" } as const]),
      ],
    });
    const asked = await saveChat(s, [q]);
    await saveChat(s, [q, asking()], { after: asked.lastMessageId });
    await saveChat(s, [q, asking("red")], { after: asked.lastMessageId });
    // Regenerate: the list ends at the question (a branch forked right after it), then the new answer's first form.
    const again = await saveChat(s, [q]);
    const saved = await saveChat(s, [q, asking()], { after: again.lastMessageId });
    expect(saved).toMatchObject({ appended: 1, branchId: (await s.info()).currentBranchId });
    const chat = await loadChat(s);
    expect(chat.map((m) => m.role)).toEqual(["user", "assistant"]);
    const answer = (await s.history()).at(-1)!;
    expect(await s.versions(answer.id)).toMatchObject({ index: 1, count: 2 });
  });
});
