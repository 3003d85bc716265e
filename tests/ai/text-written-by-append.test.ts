// A conversation written through the core API (`s.append` with string content) and saved back as the AI SDK reads it:
// its text comes back as a text part, which is the same message, so nothing forks and no tool call is undone.
import { convertToModelMessages } from "ai";
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { loadChat, loadModelMessages, saveChat, saveModelMessages } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { tempDir, writeFileTool } from "../fixtures/file-tools.js";

const dbs = tempDatabases();

async function written() {
  const dir = tempDir("forkpoint-ai-append-");
  const file = path.join(dir, "a.txt");
  const { fp } = dbs.open({ tools: [writeFileTool()] });
  const s = await fp.createSession({ userId: "u" });
  await s.append({ role: "user", content: "start" });
  await s.invoke("write_file", { path: file, text: "x" });
  await s.append({ role: "assistant", content: "wrote it" });
  return { s, file, branchId: (await s.info()).currentBranchId };
}

it("saveChat of loadChat's list changes nothing; an answer after it is appended", async () => {
  const { s, file, branchId } = await written();
  const saved = await saveChat(s, await loadChat(s));
  expect(saved).toMatchObject({ forked: null, appended: 0, branchId });
  expect(fs.existsSync(file)).toBe(true);
  const next = await saveChat(s, [...(await loadChat(s)), { id: "u2", role: "user", parts: [{ type: "text", text: "more" }] }]);
  expect(next).toMatchObject({ forked: null, appended: 1, branchId });
  expect((await s.toolTrack()).map((t) => t.applied)).toEqual([true]);
});

it("saveModelMessages of the converted chat, or of loadModelMessages' list, changes nothing", async () => {
  const { s, file, branchId } = await written();
  expect(await saveModelMessages(s, await convertToModelMessages(await loadChat(s)))).toMatchObject({
    forked: null,
    appended: 0,
    branchId,
  });
  expect(await saveModelMessages(s, await loadModelMessages(s))).toMatchObject({ forked: null, appended: 0, branchId });
  expect(fs.existsSync(file)).toBe(true);
  // Text that does differ is still an edit.
  const edited = await saveModelMessages(s, [{ role: "user", content: [{ type: "text", text: "other start" }] }]);
  expect(edited.forked).toBe("edit");
  expect(fs.existsSync(file)).toBe(false);
});
