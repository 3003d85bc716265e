// What a read gives as none (null: a message's metadata and clientId, a session's title and metadata, a checkpoint's
// metadata) is taken back as none: a value read, written again, is accepted and stored as the same none.
import { expect, it } from "vitest";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

it("takes null back where reads give it", async () => {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u", title: null, metadata: null });
  expect(await s.info()).toMatchObject({ title: null, metadata: null });
  const [m] = await s.append({ role: "user", content: "hi" });
  expect(m).toMatchObject({ clientId: null, metadata: null });
  const [copy] = await s.append({ role: m!.role, content: m!.content, clientId: m!.clientId, metadata: m!.metadata });
  expect(copy).toMatchObject({ clientId: null, metadata: null, content: "hi" });
  const edited = await s.edit(copy!.id, { content: "hello", clientId: null, metadata: null });
  expect(edited.message).toMatchObject({ clientId: null, metadata: null, content: "hello" });
  const cp = await s.checkpoint({ name: "c", metadata: null });
  expect(cp.metadata).toBeNull();
  const unnamed = await s.checkpoint({ name: null });
  expect(unnamed.name).toBeNull();
  const [turned] = (await s.turn([{ role: "user", content: "again", clientId: null, metadata: null }], { metadata: null })).messages;
  expect(turned).toMatchObject({ clientId: null, metadata: null });
});

it("records a tool call again as toolTrack() gives it: callId and error null", async () => {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  const ok = await s.recordToolCall({ tool: "search", args: { q: "x" }, result: { hits: 1 } });
  const failed = await s.recordToolCall({ tool: "search", args: { q: "y" }, error: "timed out" });
  const [a, b] = await s.toolTrack();
  expect([a!.callId, a!.error, b!.callId, b!.result]).toEqual([null, null, null, null]);
  const again = await s.recordToolCall({ tool: a!.tool, args: a!.args, result: a!.result, error: a!.error, callId: a!.callId });
  expect(again).toMatchObject({ status: ok.status, result: { hits: 1 }, error: null, callId: null });
  const failedAgain = await s.recordToolCall({ tool: b!.tool, args: b!.args, result: b!.result, error: b!.error, callId: b!.callId });
  expect(failedAgain).toMatchObject({ status: failed.status, result: null, error: failed.error, callId: null });
});
