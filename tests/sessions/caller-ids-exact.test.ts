// A caller's own ids (a message's clientId, a tool call's callId) read back exactly as given, white space included,
// through export and import and the AI SDK's loadChat; a blank one is refused, nothing written.
import { expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { loadChat, saveChat } from "../../src/ai/index.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const echo = defineTool<{ x: number }, { x: number }>({ name: "echo", run: (a) => a, undo: () => undefined });

it("clientId and callId are kept exactly as given", async () => {
  const { fp } = dbs.open({ tools: [echo] });
  const s = await fp.createSession({ userId: "u" });
  await s.append({ role: "user", content: "hi", clientId: " m1 " });
  await s.invoke("echo", { x: 1 }, { callId: "call 1\t" });
  await s.recordToolCall({ tool: "echo", args: { x: 2 }, result: { x: 2 }, callId: " call 2" });
  expect((await s.history()).map((m) => m.clientId)).toEqual([" m1 "]);
  expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["call 1\t", " call 2"]);

  // Import keeps ids: the source is deleted first.
  const doc = await fp.exportSession(s.id, { userId: "u" });
  await fp.deleteSession(s.id, { userId: "u" });
  const copy = await fp.importSession(doc, { userId: "u" });
  expect((await copy.history()).map((m) => m.clientId)).toEqual([" m1 "]);
  expect((await copy.toolTrack()).map((t) => t.callId)).toEqual(["call 1\t", " call 2"]);

  expect(await rejectionOf(copy.append({ role: "user", content: "x", clientId: "  " }))).toMatchObject({ code: "VALIDATION_ERROR" });
  expect(await rejectionOf(copy.invoke("echo", { x: 3 }, { callId: "" }))).toMatchObject({ code: "VALIDATION_ERROR" });
  expect((await copy.history()).length).toBe(1);
  expect((await copy.toolTrack()).length).toBe(2);
});

it("a UIMessage id with white space round-trips through saveChat and loadChat", async () => {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  const messages = [
    { id: " m1 ", role: "user" as const, parts: [{ type: "text" as const, text: "hi" }] },
    { id: "m2", role: "assistant" as const, parts: [{ type: "text" as const, text: "yo" }] },
  ];
  await saveChat(s, messages);
  await saveChat(s, messages);
  expect((await loadChat(s)).map((m) => m.id)).toEqual([" m1 ", "m2"]);
  expect((await s.history()).length).toBe(2);
});
