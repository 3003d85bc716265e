// forkpoint/ai messages: UIMessage[] (and ModelMessage[]) round-trip through a session, binary data included; a
// regenerated answer or an edited question becomes a version (< 2/2 >), never an overwrite.
import { convertToModelMessages, generateText, isStepCount, tool, validateUIMessages, type ModelMessage, type UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ValidationError } from "../../src/index.js";
import { aiCheckpointTools, loadChat, loadModelMessages, saveChat, saveModelMessages, undoableTools } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { call, scriptedModel, text } from "./mock-model.js";
import { dumpOf } from "../fixtures/backend.js";

const dbs = tempDatabases();

type Meta = { createdAt: number; model?: string };
type ChatMessage = UIMessage<Meta | string, { chart: { png: Uint8Array; title: string } }>;

const user = (id: string, t: string): ChatMessage => ({ id, role: "user", parts: [{ type: "text", text: t }] });
const assistant = (id: string, t: string): ChatMessage => ({
  id,
  role: "assistant",
  parts: [{ type: "text", text: t }],
  metadata: { createdAt: 1, model: "m" },
});

async function session() {
  const { fp, path } = dbs.open();
  return { s: await fp.createSession({ userId: "u" }), path };
}

describe("saveChat / loadChat", () => {
  it("round-trips UIMessage[] exactly: parts of every kind, binary data, metadata of any JSON type", async () => {
    const { s } = await session();
    const png = new Uint8Array([137, 80, 78, 71, 0, 255, 13, 10]);
    const messages: ChatMessage[] = [
      { id: "sys", role: "system", parts: [{ type: "text", text: "Be brief." }], metadata: "a plain string" },
      {
        id: "u1",
        role: "user",
        metadata: { createdAt: 42 },
        parts: [
          { type: "text", text: "What is in this picture?" },
          { type: "file", mediaType: "image/png", filename: "x.png", url: `data:image/png;base64,${Buffer.from(png).toString("base64")}` },
        ],
      },
      {
        id: "a1",
        role: "assistant",
        parts: [
          { type: "step-start" },
          { type: "reasoning", text: "Looking", state: "done" },
          {
            type: "dynamic-tool",
            toolName: "lookup",
            toolCallId: "tc1",
            state: "output-available",
            input: { q: "png" },
            output: { hits: [1, 2] },
          },
          { type: "data-chart", id: "d1", data: { png, title: "chart" } },
          { type: "text", text: "A chart.", state: "done" },
        ],
      },
    ];
    const saved = await saveChat(s, messages);
    expect(saved).toMatchObject({ kept: 0, forked: null, continued: false, appended: 3 });
    expect((await s.history()).map((m) => m.clientId)).toEqual(["sys", "u1", "a1"]);

    const loaded = await loadChat<ChatMessage>(s);
    expect(loaded).toEqual(messages);
    const chart = loaded[2]!.parts[3] as { data: { png: Uint8Array } };
    expect(chart.data.png).toBeInstanceOf(Uint8Array);
    expect([...chart.data.png]).toEqual([...png]);
    // Stored as JSON the database can hold: base64, not a byte-per-key object.
    expect(JSON.stringify((await s.history())[2]!.content)).toContain(Buffer.from(png).toString("base64"));
  });

  it("round-trips metadata of every JSON type and tool parts in every state, and saving them again writes nothing", async () => {
    const { s } = await session();
    const metas: unknown[] = [
      0,
      false,
      "",
      null,
      [],
      [1, "two", null],
      { nested: { $fp: "bytes", base64: "not really" } },
      { createdAt: 1.5 },
    ];
    const states: UIMessage["parts"] = [
      { type: "tool-search", toolCallId: "t1", state: "input-streaming", input: undefined },
      { type: "tool-search", toolCallId: "t2", state: "input-streaming", input: { q: "par" } },
      { type: "tool-search", toolCallId: "t3", state: "input-available", input: { q: "full" }, callProviderMetadata: { p: { x: 1 } } },
      { type: "tool-search", toolCallId: "t4", state: "output-available", input: { q: "x" }, output: [{ hit: 1 }], preliminary: true },
      { type: "tool-search", toolCallId: "t5", state: "output-error", input: { q: "x" }, errorText: "boom" },
      { type: "tool-delete", toolCallId: "t6", state: "approval-requested", input: { id: 1 }, approval: { id: "ap1" } },
      {
        type: "tool-delete",
        toolCallId: "t7",
        state: "approval-responded",
        input: { id: 1 },
        approval: { id: "ap2", approved: false, reason: "no" },
      },
      { type: "tool-delete", toolCallId: "t8", state: "output-denied", input: { id: 1 }, approval: { id: "ap3", approved: false } },
      { type: "dynamic-tool", toolName: "mcp_x", toolCallId: "t9", state: "output-error", input: {}, errorText: "e" },
      { type: "file", mediaType: "application/pdf", url: "data:application/pdf;base64,JVBERi0=" },
      { type: "source-url", sourceId: "s1", url: "https://x.test" },
      // ai@7's parts and fields: citations, provider content, reasoning files, steering, resumable input, tool metadata,
      // automatic and signed approvals, a call of a tool the app no longer has.
      {
        type: "text",
        text: "cited",
        citations: [{ source: { type: "source", sourceType: "url", id: "s1", url: "https://x.test" }, startIndex: 0, endIndex: 5 }],
      },
      { type: "custom", kind: "acme.widget", providerMetadata: { acme: { v: 1 } } },
      { type: "reasoning-file", mediaType: "image/png", url: "data:image/png;base64,iVBORw==" },
      { type: "steering-message", id: "st1", parts: [{ type: "text", text: "also Porto" }] },
      {
        type: "tool-search",
        toolCallId: "t10",
        state: "input-streaming",
        rawInput: '{"q":"pa',
        inputEncoding: "json",
        toolMetadata: { mcp: "x" },
      },
      {
        type: "tool-delete",
        toolCallId: "t11",
        state: "approval-responded",
        input: { id: 2 },
        approval: { id: "ap4", approved: true, isAutomatic: true, signature: "sig" },
      },
      { type: "dynamic-tool", dynamic: false, toolName: "gone", toolCallId: "t12", state: "output-available", input: {}, output: 1 },
    ];
    const messages: UIMessage[] = [
      ...metas.map((metadata, i): UIMessage => ({ id: `m${i}`, role: "user", metadata, parts: [{ type: "text", text: `m${i}` }] })),
      { id: "a", role: "assistant", parts: states },
    ];
    await saveChat(s, messages);
    const loaded = await loadChat(s);
    expect(loaded).toEqual(messages);
    expect(loaded.map((m) => m.metadata)).toStrictEqual([...metas, undefined]);
    expect(await saveChat(s, loaded)).toMatchObject({ kept: messages.length, forked: null, continued: false, appended: 0 });
  });

  it("a list validated by validateUIMessages, which makes a removed tool's calls dynamic, is the same chat", async () => {
    const { s } = await session();
    const search = (id: string) => ({
      type: "tool-search" as const,
      toolCallId: id,
      state: "output-available" as const,
      input: { q: id },
      output: 1,
    });
    const chat: UIMessage[] = [
      user("u1", "find"),
      { id: "a1", role: "assistant", parts: [search("t1"), { type: "text", text: "found" }] },
      user("u2", "again"),
      { id: "a2", role: "assistant", parts: [search("t2")] },
    ];
    await saveChat(s, chat);
    // The app dropped its `search` tool: ai@7 rewrites its finished calls as dynamic-tool parts (dynamic: false).
    const tools = { other: tool({ inputSchema: z.object({}), execute: async () => 1 }) };
    const validated = await validateUIMessages({ messages: await loadChat(s), tools });
    expect(validated[1]!.parts[0]).toMatchObject({ type: "dynamic-tool", dynamic: false, toolName: "search" });
    expect(await saveChat(s, validated)).toMatchObject({ kept: 4, forked: null, continued: false, appended: 0 });
    expect(await saveChat(s, [...validated, user("u3", "thanks")])).toMatchObject({ kept: 4, forked: null, continued: false, appended: 1 });
    expect(await s.branches()).toHaveLength(1);
    // Stored as first saved; a real change to such a part is still an edit.
    expect((await loadChat(s))[1]!.parts[0]).toEqual(search("t1"));
    const changed = validated.map((m, i) => (i === 3 ? { ...m, parts: [{ ...m.parts[0]!, output: 2 } as UIMessage["parts"][number]] } : m));
    expect(await saveChat(s, changed)).toMatchObject({ kept: 3, forked: "edit" });
  });

  it("keeps the unchanged prefix as it is and appends only the new messages", async () => {
    const { s } = await session();
    await saveChat(s, [user("u1", "hi"), assistant("a1", "hello")]);
    const before = await s.history();
    const r = await saveChat(s, [user("u1", "hi"), assistant("a1", "hello"), user("u2", "more"), assistant("a2", "sure")]);
    expect(r).toMatchObject({ kept: 2, forked: null, continued: false, appended: 2 });
    const after = await s.history();
    expect(after.slice(0, 2)).toEqual(before);
    expect(await s.branches()).toHaveLength(1);
    // Saving the same list again writes nothing.
    expect(await saveChat(s, await loadChat(s))).toMatchObject({ kept: 4, forked: null, continued: false, appended: 0 });
  });

  it("a regenerated answer becomes a new version of it, the old one kept", async () => {
    const { s } = await session();
    await saveChat(s, [user("u1", "hi"), assistant("a1", "hello")]);
    const old = (await s.history())[1]!;
    // The regenerate request carries the messages without the answer; the response adds the new answer.
    expect(await saveChat(s, [user("u1", "hi")])).toMatchObject({ kept: 1, forked: "truncate", continued: false, appended: 0 });
    expect((await loadChat(s)).map((m) => m.id)).toEqual(["u1"]);
    expect(await saveChat(s, [user("u1", "hi"), assistant("a1b", "hey there")])).toMatchObject({
      kept: 1,
      forked: null,
      continued: false,
      appended: 1,
    });
    const answer = (await s.history())[1]!;
    const v = await s.versions(answer.id);
    expect([v.index + 1, v.count]).toEqual([2, 2]);
    expect(v.versions[0]!.message.id).toBe(old.id);
    // Saved only after the response (no truncating save first): the changed answer is an edit, a version too.
    expect(await saveChat(s, [user("u1", "hi"), assistant("a1c", "third")])).toMatchObject({
      kept: 1,
      forked: "edit",
      continued: false,
      appended: 0,
    });
    const third = await s.versions((await s.history())[1]!.id);
    expect([third.index + 1, third.count]).toEqual([3, 3]);
  });

  it("a regenerate saved before and after its loop undoes the old answer's tool calls and keeps the new ones", async () => {
    const { s } = await session();
    const notes = new Map<string, string>();
    const appTools = {
      note: tool({ inputSchema: z.object({ k: z.string(), v: z.string() }), execute: async ({ k, v }) => (notes.set(k, v), "noted") }),
    };
    const ask = user("u1", "note something");
    // As a route handler does per request: save the request's messages, wrap the tools for this loop, run, save.
    const loop = async (id: string, v: string) => {
      await saveChat(s, [ask]);
      const tools = undoableTools(s, appTools, { note: async ({ args }) => void notes.delete(args.k) });
      const r = await generateText({
        model: scriptedModel([[call(id, "note", { k: "x", v })], [text(`noted ${v}`)]]),
        tools,
        prompt: "go",
        stopWhen: isStepCount(3),
      });
      await saveChat(s, [ask, assistant(`a-${id}`, r.text)]);
    };
    await loop("n1", "first");
    expect([...notes]).toEqual([["x", "first"]]);
    // Regenerate: the request's messages (without the answer) fork first, undoing the old answer's call.
    await loop("n2", "second");
    expect([...notes]).toEqual([["x", "second"]]);
    expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["n2"]);
    // The old answer and its call stay on the branch the regenerate left.
    const old = (await s.branches()).find((b) => !b.current && b.parentId === null)!;
    expect((await s.history({ branchId: old.id })).map((m) => m.clientId)).toEqual(["u1", "a-n1"]);
    expect((await s.toolTrack({ branchId: old.id })).map((t) => t.callId)).toEqual(["n1"]);
  });

  it("an edited earlier question forks before it; the old branch with its answers stays in the tree", async () => {
    const { s } = await session();
    const first = [user("u1", "trip to Rome"), assistant("a1", "ok"), user("u2", "in May"), assistant("a2", "booked")];
    await saveChat(s, first);
    const oldBranch = (await s.info()).currentBranchId;
    const r = await saveChat(s, [user("u1", "trip to Lisbon"), assistant("a1x", "ok, Lisbon")]);
    expect(r).toMatchObject({ kept: 0, forked: "edit", continued: false, appended: 1 });
    expect((await loadChat(s)).map((m) => (m.parts[0] as { text: string }).text)).toEqual(["trip to Lisbon", "ok, Lisbon"]);
    const v = await s.versions((await s.history())[0]!.id);
    expect([v.index + 1, v.count]).toEqual([2, 2]);
    expect((await s.history({ branchId: oldBranch })).map((m) => m.clientId)).toEqual(["u1", "a1", "u2", "a2"]);
  });

  it("the same list saved by two servers at once is stored once: no duplicate, no fork, no spurious version", async () => {
    const { fp, path } = dbs.open();
    const other = dbs.open({ path }).fp; // another app server on the same database (a double submit, a retried request)
    const chat = await fp.createSession({ userId: "u" });
    const there = await other.getSession(chat.id, { userId: "u" });
    const q = user("q1", "hello");
    const a = assistant("a1", "hi there");
    await Promise.all([saveChat(chat, [q]), saveChat(there, [q])]);
    await Promise.all([saveChat(chat, [q, a]), saveChat(there, [q, a])]);
    expect(await loadChat(chat)).toEqual([q, a]);
    expect((await chat.history()).map((m) => m.clientId)).toEqual(["q1", "a1"]);
    expect(await chat.branches()).toHaveLength(1);
    const [first] = await chat.history();
    expect((await chat.versions(first!.id)).count).toBe(1);
  });

  it("the same edited, then shortened, list saved by three servers at once: one edit, one fork", async () => {
    const { fp, path } = dbs.open();
    const chat = await fp.createSession({ userId: "u" });
    const servers = [chat, ...(await Promise.all([0, 1].map(() => dbs.open({ path }).fp.getSession(chat.id, { userId: "u" }))))];
    await saveChat(chat, [user("q1", "hello"), assistant("a1", "hi"), user("q2", "trip?")]);
    // The user edited the question: each server gets the edited list (a double submit, a retried request).
    const edited = [user("q1", "hello"), assistant("a1", "hi"), user("q2", "trip to Porto?")];
    const saves = await Promise.all(servers.map((s) => saveChat(s, edited)));
    expect(saves.map((saved) => saved.forked).filter((forked) => forked !== null)).toEqual(["edit"]);
    expect(await loadChat(chat)).toEqual(edited);
    const question = (await chat.history()).at(-1)!;
    expect((await chat.versions(question.id)).count).toBe(2);
    expect(await chat.branches()).toHaveLength(2);
    // Regenerate from the first answer: the list ends there, so the saves fork right after it, once.
    const shortened = await Promise.all(servers.map((s) => saveChat(s, edited.slice(0, 2))));
    expect(shortened.map((saved) => saved.forked).filter((forked) => forked !== null)).toEqual(["truncate"]);
    expect(await loadChat(chat)).toEqual(edited.slice(0, 2));
    expect(await chat.branches()).toHaveLength(3);
  });

  it("refuses what is not a UIMessage list with a ValidationError and writes nothing", async () => {
    const { s, path } = await session();
    await saveChat(s, [user("u1", "hi")]);
    const dump = await dumpOf(path);
    await expect(saveChat(s, "hi" as never)).rejects.toBeInstanceOf(ValidationError);
    await expect(saveChat(s, [user("u1", "hi"), { id: "x", role: "user" } as never])).rejects.toThrow(/messages\[1\]\.parts/);
    const bad = await saveChat(s, [user("u1", "hi"), { id: "f", role: "user", parts: [{ type: "data-x", data: () => 1 }] } as never]).catch(
      (e: unknown) => e,
    );
    expect(bad).toBeInstanceOf(ValidationError);
    // A changed message followed by a bad one: refused before the edit, so no branch is made.
    const late = await saveChat(s, [user("u1", "changed"), { id: "f", role: "user", parts: [{ type: "text", text: "\ud800" }] }]).catch(
      (e: unknown) => e,
    );
    expect(late).toBeInstanceOf(ValidationError);
    expect(await dumpOf(path)).toEqual(dump);
  });

  it("refuses an empty list once the chat holds a message (a lost list, not a chat): nothing written, no branch", async () => {
    const { s, path } = await session();
    // An empty chat saved empty is the same chat: nothing to write.
    expect(await saveChat(s, [])).toMatchObject({ kept: 0, forked: null, appended: 0, lastMessageId: null });
    expect(await saveModelMessages(s, [])).toMatchObject({ kept: 0, forked: null, appended: 0, lastMessageId: null });
    await saveChat(s, [user("u1", "hi"), assistant("a1", "hello")]);
    const dump = await dumpOf(path);
    await expect(saveChat(s, [])).rejects.toMatchObject({ name: "ValidationError", field: "messages" });
    await expect(saveModelMessages(s, [])).rejects.toMatchObject({ name: "ValidationError", field: "messages" });
    expect(await dumpOf(path)).toEqual(dump);
    expect(await s.branches()).toHaveLength(1);
    expect((await loadChat(s)).map((m) => m.id)).toEqual(["u1", "a1"]);
  });
});

describe("saveModelMessages / loadModelMessages", () => {
  it("round-trip a generateText loop's messages, image bytes included", async () => {
    const { s } = await session();
    const image = new Uint8Array([1, 2, 3, 250]);
    // ai@7's file parts (its "image" part is deprecated): tagged file data, bytes or inline text.
    const prompt: ModelMessage[] = [
      { role: "user", content: "hello" },
      {
        role: "user",
        content: [
          { type: "text", text: "look" },
          { type: "file", data: { type: "data", data: image }, mediaType: "image/png" },
          { type: "file", data: { type: "text", text: "a,b\n1,2" }, mediaType: "text/csv", filename: "t.csv" },
        ],
        providerOptions: { x: { y: 1 } },
      },
    ];
    const result = await generateText({
      model: scriptedModel([[call("t1", "echo", { v: "a" })], [text("seen")]]),
      tools: { echo: tool({ inputSchema: z.object({ v: z.string() }), execute: async ({ v }) => v }) },
      messages: prompt,
      stopWhen: isStepCount(3),
    });
    const all = [...prompt, ...result.response.messages];
    await saveModelMessages(s, all);
    const loaded = await loadModelMessages(s);
    expect(loaded).toEqual(all);
    expect((loaded[1]!.content as Array<{ data: { data?: unknown } }>)[1]!.data.data).toBeInstanceOf(Uint8Array);
    // The loaded list goes straight back to the model.
    const next = await generateText({ model: scriptedModel([[text("again")]]), messages: loaded });
    expect(next.text).toBe("again");
  });
});

describe("UIMessages from a real loop, with the checkpoint tools", () => {
  it("a model's own rollback (aiCheckpointTools) undoes its calls and its loop goes on from the new branch", async () => {
    const { s } = await session();
    const files = new Map<string, string>();
    const tools = undoableTools(
      s,
      { put: tool({ inputSchema: z.object({ k: z.string(), v: z.string() }), execute: async ({ k, v }) => (files.set(k, v), "ok") }) },
      { put: async ({ args }) => void files.delete(args.k) },
    );
    const cp = await s.checkpoint({ name: "clean" });
    const model = scriptedModel([
      [call("p1", "put", { k: "a", v: "1" })],
      [call("r1", "rollback", { checkpointId: cp.id })],
      [call("p2", "put", { k: "b", v: "2" })],
      [text("done")],
    ]);
    const result = await generateText({ model, tools: { ...tools, ...aiCheckpointTools(s) }, prompt: "go", stopWhen: isStepCount(6) });
    expect(result.text).toBe("done");
    expect(result.steps[1]!.toolResults[0]!.output).toMatchObject({ ok: true, undone: [{ tool: "put" }] });
    expect(result.steps[2]!.toolResults[0]!.output).toBe("ok");
    expect([...files]).toEqual([["b", "2"]]);
    expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["p2"]);

    // The conversation as the UI sees it, saved on the branch the loop ended on.
    const ui: UIMessage[] = [user("u1", "go"), { id: "a1", role: "assistant", parts: [{ type: "text", text: result.text }] }];
    await saveChat(s, ui);
    expect(await loadChat(s)).toEqual(ui);
    expect(await convertToModelMessages(ui)).toHaveLength(2);
  });
});
