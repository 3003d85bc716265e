// Issue 32: two calls in one snapshot bracket, and a failed undo keeps a path of one of them. Each call's run recorded
// the paths it changed, so the restore knows the kept path is c1's (under c2) alone: c1 stays unapplied (its effect
// is not on disk), the append comes back with its file, and switching back brings each of them back once.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { appendLineTool, flakyWriteTool, readOrNull, type FlakyControl } from "../fixtures/file-tools.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;
const control: FlakyControl = {};
const file = (rel: string) => path.join(ws, rel);

beforeEach(() => {
  dir = makeTempDir("forkpoint-kept-ambiguous-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  control.failUndo = false;
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [appendLineTool(), flakyWriteTool({ control })] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

it("two calls in one snapshot bracket, one of them in a kept path: each comes back once", async () => {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("append_line", { path: file("log"), line: "L1" });
  await s.invoke("flaky_write", { path: file("c"), text: "c1" });
  const both = await s.checkpoint({ name: "both" });
  const root = (await s.info()).currentBranchId;
  await s.rollback(start.id, { scope: "both" });
  await s.invoke("flaky_write", { path: file("c"), text: "c2" });
  await s.checkpoint({ name: "c2" });
  control.failUndo = true;
  await s.rollback(both.id, { scope: "both", onUndoError: "continue" });
  control.failUndo = false;

  await s.switchBranch(root, { scope: "conversation" });
  expect([readOrNull(file("log")), readOrNull(file("c"))]).toEqual(["L1\n", "c1"]);
});
