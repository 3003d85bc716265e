// Each `invoke` on a session with a local workspace records the workspace paths its run changed (none is a record too):
// one world's knowledge, so clones and imports carry none, and deleting the session deletes them.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { appendLineTool, writeFileTool } from "../fixtures/file-tools.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint, sqlOn } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let dbFile: string;
let fp: Forkpoint;

beforeEach(() => {
  dir = makeTempDir("forkpoint-call-paths-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  dbFile = path.join(dir, "forkpoint.db");
  fp = openForkpoint({ path: dbFile, tools: [appendLineTool(), writeFileTool()] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

const pathsOf = async (sessionId: string) =>
  Object.fromEntries(
    (
      await sqlOn<{ entry_id: string; paths: string }>(dbFile, "SELECT entry_id, paths FROM call_paths WHERE session_id = $1", [sessionId])
    ).map((r) => [r.entry_id, JSON.parse(r.paths) as string[]]),
  );

it("records each call's changed paths, none included; clones and imports carry none; a delete removes them", async () => {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  fs.mkdirSync(path.join(ws, "src"));
  await s.invoke("write_file", { path: path.join(ws, "src", "a.ts"), text: "a" });
  await s.invoke("append_line", { path: path.join(ws, "log"), line: "L1" });
  await s.invoke("write_file", { path: path.join(dir, "outside.txt"), text: "elsewhere" });
  const [a, log, outside] = (await s.toolTrack()).map((t) => t.id);
  expect(await pathsOf(s.id)).toEqual({ [a!]: ["src/a.ts"], [log!]: ["log"], [outside!]: [] });

  const other = await fp.createSession({ userId: "u" });
  await other.attachWorkspace(fs.mkdtempSync(path.join(dir, "other-")));
  await other.invoke("write_file", { path: path.join(dir, "outside.txt"), text: "again" });
  const clone = await fp.clone(s.id, { userId: "u" });
  expect(await pathsOf(clone.id)).toEqual({});
  const doc = await fp.exportSession(s.id, { userId: "u" });

  await fp.deleteSession(s.id, { userId: "u" });
  expect(await pathsOf(s.id)).toEqual({});
  expect(Object.values(await pathsOf(other.id))).toEqual([[]]);
  // The same ids again, from the document: nothing of the deleted session's record comes back.
  const imported = await fp.importSession(doc, { userId: "u" });
  expect(imported.id).toBe(s.id);
  expect(await pathsOf(imported.id)).toEqual({});
});
