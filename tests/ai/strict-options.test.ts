// From the adapters review: undoableTools' options and saveChat's messages are checked as the core verbs check theirs.
// A misspelt option (`afterr`) would put the loop's calls on the current branch instead of after the question; a list
// naming one message twice, or a role no UIMessage has, is no chat a page holds. Each is a ValidationError naming the field.
import { tool, type UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ValidationError } from "../../src/index.js";
import { aiToolDefinitions, loadChat, saveChat, undoableTools } from "../../src/ai/index.js";
import { tempDatabases, thrownBy, rejectionOf } from "../helpers.js";

const dbs = tempDatabases();
const tools = { note: tool({ inputSchema: z.object({ t: z.string() }), execute: async ({ t }) => t }) };
const user = (id: string, text: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text }] });

describe("undoableTools and aiToolDefinitions options", () => {
  it("refuse an unknown key and an abortController that is none, naming them", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    for (const wrap of [(o: never) => undoableTools(s, tools, {}, o), (o: never) => aiToolDefinitions(tools, {}, o)]) {
      const unknown = thrownBy(() => wrap({ afterr: "msg_x" } as never));
      expect(unknown).toBeInstanceOf(ValidationError);
      expect(unknown).toMatchObject({ field: "options", message: expect.stringContaining("afterr") });
      expect(thrownBy(() => wrap({ abortController: 5 } as never))).toMatchObject({ field: "options.abortController" });
    }
    expect(Object.keys(undoableTools(s, tools, {}, { abortController: new AbortController(), after: null }))).toEqual(["note"]);
  });
});

describe("saveChat", () => {
  it("refuses a list naming one message twice, and a role no UIMessage has; nothing is written", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await saveChat(s, [user("q1", "hi")]);
    const twice = await rejectionOf(saveChat(s, [user("q1", "hi"), user("q2", "a"), user("q1", "b")]));
    expect(twice).toBeInstanceOf(ValidationError);
    expect(twice).toMatchObject({ field: "messages[2].id", message: expect.stringContaining("messages[0].id") });
    const bogus = await rejectionOf(saveChat(s, [user("q1", "hi"), { ...user("q2", "a"), role: "bogus" } as never]));
    expect(bogus).toMatchObject({ field: "messages[1].role" });
    expect(await loadChat(s)).toEqual([user("q1", "hi")]);
    // Messages not named yet (an empty id) may be several.
    await saveChat(s, [user("q1", "hi"), user("", "a"), { id: "", role: "assistant", parts: [{ type: "text", text: "b" }] }]);
    expect((await loadChat(s)).map((m) => m.role)).toEqual(["user", "user", "assistant"]);
  });
});

describe("saveChat's field on a value JSON cannot hold", () => {
  it("names the UIMessage's own path (parts, metadata), not the stored form's", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const bigint = await rejectionOf(
      saveChat(s, [user("q1", "hi"), { id: "a1", role: "assistant", parts: [{ type: "text", text: 1n }] } as never]),
    );
    expect(bigint).toMatchObject({
      name: "ValidationError",
      field: "messages[1].parts[0].text",
      message: expect.stringContaining("BigInt"),
    });
    const fn = await rejectionOf(saveChat(s, [{ ...user("q1", "hi"), metadata: { at: { f: () => 1 } } } as never]));
    expect(fn).toMatchObject({ field: "messages[0].metadata.at.f" });
    const date = await rejectionOf(saveChat(s, [{ ...user("q1", "hi"), metadata: { at: new Date(0) } } as never]));
    expect(date).toMatchObject({ field: "messages[0].metadata.at", message: expect.stringContaining("Date") });
    const nan = await rejectionOf(saveChat(s, [{ id: "q1", role: "user", parts: [{ type: "text", text: "x", n: NaN }] } as never]));
    expect(nan).toMatchObject({ field: "messages[0].parts[0].n" });
    expect(await loadChat(s)).toEqual([]);
  });
});

describe("loadChat of a chat holding one id twice", () => {
  it("names the later message by forkpoint's id, so the list saves back and the chat goes on", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.append([
      { role: "user", content: "q1", clientId: "x" },
      { role: "assistant", content: "a1", clientId: "x" },
    ]);
    const loaded = await loadChat(s);
    expect(loaded.map((m) => m.id)).toEqual(["x", (await s.history())[1]!.id]);
    await saveChat(s, [...loaded, user("q2", "more")]);
    expect((await loadChat(s)).map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(await s.branches()).toHaveLength(1);
  });
});
