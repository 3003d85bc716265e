// A "both" move over calls the world shares with its target reports in `files.kept` only the paths it kept as they
// differ from what the target's lineage has: a call left applied without recorded paths (its undo failed) takes in
// every path that changed across it, a shared call's among them, which holds just what that call left there.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { readOrNull, tempDir, writeFileTool, type WriteArgs, type WriteResult } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** Acts only in the workspace; its undo fails. */
const tidy = defineTool<Record<string, never>, { ok: boolean }>({
  name: "tidy",
  effects: "workspace",
  run: () => ({ ok: true }),
  undo: () => {
    throw new Error("cannot undo tidy");
  },
});

/** Writes a file; its undo fails. */
const stubbornWrite = defineTool<WriteArgs, WriteResult>({
  name: "stubborn_write",
  run: ({ path: p, text }) => {
    const previous = readOrNull(p);
    fs.writeFileSync(p, text);
    return { previous };
  },
  undo: () => {
    throw new Error("cannot undo stubborn_write");
  },
});

/** "start" (files), a.txt written "1" (shared by both sides of the edit), then message `m` and `after` on it. */
async function sharedThen(after: (s: Awaited<ReturnType<typeof session>>["s"], at: (rel: string) => string) => Promise<unknown>) {
  const { s, at } = await session();
  await s.append({ role: "user", content: "go" });
  await s.checkpoint({ name: "start" });
  await s.invoke("write_file", { path: at("a.txt"), text: "1" });
  const [m] = await s.append({ role: "user", content: "now tidy" });
  await after(s, at);
  const edited = await s.edit(m!.id, { content: "now tidy again" }, { scope: "both", onUndoError: "continue" });
  return { edited, at };
}

async function session() {
  const ws = tempDir("forkpoint-kept-shared-");
  fs.writeFileSync(path.join(ws, "a.txt"), "0");
  const { fp } = dbs.open({ tools: [writeFileTool(), tidy, stubbornWrite] as never[] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  return { s, at: (rel: string) => path.join(ws, rel) };
}

it("a call with no recorded paths left applied: the shared call's file is not reported kept", async () => {
  const { edited, at } = await sharedThen((s) => s.recordToolCall({ tool: "tidy", args: {}, result: { ok: true } }));
  expect(edited.failed).toHaveLength(1);
  expect(readOrNull(at("a.txt"))).toBe("1");
  expect(edited.files?.kept).toBeUndefined();
});

it("a call left applied that wrote over the shared call's file: that file is reported kept", async () => {
  const { edited, at } = await sharedThen((s, at) => s.invoke("stubborn_write", { path: at("a.txt"), text: "2" }));
  expect(edited.failed).toHaveLength(1);
  expect(readOrNull(at("a.txt"))).toBe("2");
  expect(edited.files?.kept).toEqual(["a.txt"]);
});
