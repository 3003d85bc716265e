// A move leaves applied a kept call that changed no workspace file above one it undoes whose effect is in the files (a
// message is neither recalled nor sent again); a kept call of a tool not registered here over one only to replay stops.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { appendLineTool, readOrNull, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** A session attached to a fresh workspace, with a log of the notifications sent and recalled. */
async function attached() {
  const ws = tempDir("forkpoint-outside-stays-");
  const events: string[] = [];
  const notify = defineTool<{ id: string }, { sent: string }>({
    name: "notify",
    run: ({ id }) => {
      events.push(`send ${id}`);
      return { sent: id };
    },
    undo: ({ args }) => {
      events.push(`recall ${args.id}`);
    },
  });
  const { fp, path: db } = dbs.open({ tools: [writeFileTool(), appendLineTool(), notify] as never[] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  return { s, db, events, at: (rel: string) => path.join(ws, rel) };
}

it("a shared call with no record of its paths is undone and replayed alone, not the shared notification after it", async () => {
  const { s, events, at } = await attached();
  fs.writeFileSync(at("a.txt"), "a");
  await s.checkpoint({ name: "start" });
  const elsewhere = path.join(tempDir("forkpoint-outside-"), "out.txt");
  fs.writeFileSync(elsewhere, "framework");
  await s.recordToolCall({ tool: "write_file", args: { path: elsewhere, text: "framework" }, result: { previous: null } });
  await s.invoke("notify", { id: "deploy" });
  const [q] = await s.append({ role: "user", content: "question" });
  await s.invoke("write_file", { path: at("b.txt"), text: "answer" });
  events.length = 0;

  const edited = await s.edit(q!.id, { content: "question, edited" }, { scope: "both" });
  expect(events).toEqual([]);
  expect(edited.undone.map((t) => t.tool)).toEqual(["write_file", "write_file"]);
  expect(edited.replayed.map((t) => t.tool)).toEqual(["write_file"]);
  expect([readOrNull(at("a.txt")), readOrNull(at("b.txt")), readOrNull(elsewhere)]).toEqual(["a", null, "framework"]);
  expect((await s.toolTrack()).map((t) => [t.tool, t.applied])).toEqual([
    ["write_file", true],
    ["notify", true],
  ]);
});

it("a shared notification a switch replayed over restored files stays sent when a later edit undoes a file call", async () => {
  const { s, events, at } = await attached();
  fs.writeFileSync(at("a.txt"), "a");
  await s.checkpoint({ name: "start" });
  const [m0] = await s.append({ role: "user", content: "m0" });
  await s.invoke("write_file", { path: at("c.txt"), text: "C" });
  await s.invoke("notify", { id: "n3" });
  const [m5] = await s.append({ role: "user", content: "m5" });
  await s.invoke("write_file", { path: at("d.txt"), text: "D" });
  await s.checkpoint({ name: "head of A" });
  const a = (await s.info()).currentBranchId;
  await s.edit(m0!.id, { content: "m0 edited" }, { scope: "both" });
  // The files come back holding every call of A; the notification, outside them, is sent again on top.
  await s.switchBranch(a, { scope: "both" });
  expect(events).toEqual(["send n3", "recall n3", "send n3"]);
  events.length = 0;

  const planned = await s.plan({ messageId: m5!.id });
  const edited = await s.edit(m5!.id, { content: "m5 edited" }, { scope: "both" });
  expect(events).toEqual([]);
  expect([planned.undone, planned.replayed].map((l) => l.map((t) => t.id))).toEqual(
    [edited.undone, edited.replayed].map((l) => l.map((t) => t.id)),
  );
  expect([edited.undone.map((t) => t.tool), edited.replayed]).toEqual([["write_file"], []]);
  expect([readOrNull(at("c.txt")), readOrNull(at("d.txt"))]).toEqual(["C", null]);
  expect((await s.toolTrack()).map((t) => [t.tool, t.applied])).toEqual([
    ["write_file", true],
    ["notify", true],
  ]);
});

it("a shared call of a tool not registered here over one with no record of its paths stops the undo, not the move", async () => {
  const { s, db, at } = await attached();
  fs.writeFileSync(at("a.txt"), "a");
  await s.checkpoint({ name: "start" });
  const elsewhere = path.join(tempDir("forkpoint-outside-"), "out.txt");
  fs.writeFileSync(elsewhere, "framework");
  await s.recordToolCall({ tool: "write_file", args: { path: elsewhere, text: "framework" }, result: { previous: null } });
  await s.invoke("append_line", { path: at("u.txt"), line: "U" });
  const [q] = await s.append({ role: "user", content: "q" });
  await s.invoke("write_file", { path: at("b.txt"), text: "after" });
  const other = dbs.open({ path: db, tools: [writeFileTool()] as never[] }).fp;
  const h = await other.getSession(s.id, { userId: "u" });

  // Both shared calls stay applied, their files as they are: the recorded one is not undone under the other.
  const edited = await h.edit(q!.id, { content: "q2" }, { scope: "both" });
  expect([edited.undone.map((t) => t.tool), edited.replayed, edited.unregistered]).toEqual([["write_file"], [], []]);
  expect(edited.skipped.map((t) => t.tool)).toEqual(["write_file"]);
  expect([readOrNull(elsewhere), readOrNull(at("u.txt")), readOrNull(at("b.txt"))]).toEqual(["framework", "U\n", null]);
  expect((await h.toolTrack()).map((t) => [t.tool, t.applied])).toEqual([
    ["write_file", true],
    ["append_line", true],
  ]);
});

it("a move without files leaves applied a notification ordered above a file call it undoes", async () => {
  const { s, events, at } = await attached();
  fs.writeFileSync(at("a.txt"), "a");
  await s.checkpoint({ name: "start" });
  const [m0] = await s.append({ role: "user", content: "m0" });
  await s.invoke("notify", { id: "n1" });
  const [m2] = await s.append({ role: "user", content: "m2" });
  await s.invoke("write_file", { path: at("d.txt"), text: "D" });
  await s.checkpoint({ name: "head of A" });
  const a = (await s.info()).currentBranchId;
  await s.edit(m0!.id, { content: "m0 edited" }, { scope: "both" });
  // The restore marks the write applied, then sends the notification on top of it.
  await s.switchBranch(a, { scope: "both" });
  events.length = 0;

  const planned = await s.plan({ messageId: m2!.id });
  const edited = await s.edit(m2!.id, { content: "m2 edited" }, { scope: "conversation" });
  expect(events).toEqual([]);
  expect([edited.undone.map((t) => t.tool), edited.replayed]).toEqual([["write_file"], []]);
  expect([planned.undone, planned.replayed].map((l) => l.map((t) => t.id))).toEqual(
    [edited.undone, edited.replayed].map((l) => l.map((t) => t.id)),
  );
  expect(readOrNull(at("d.txt"))).toBeNull();
});
