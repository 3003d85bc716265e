// Issue 32: calls whose undo failed (no snapshot after the last of them) keep the paths their runs recorded, not every
// path changed since their snapshot before (which holds what the move's other undos did too): a call the target's
// snapshot holds (w3 below) is applied exactly when its effect is on disk.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { flakyWriteTool, readOrNull, writeFileTool, type FlakyControl } from "../fixtures/file-tools.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;
const control: FlakyControl = {};
const file = (rel: string) => path.join(ws, rel);

beforeEach(() => {
  dir = makeTempDir("forkpoint-kept-over-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  control.failUndo = false;
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [writeFileTool(), flakyWriteTool({ control })] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

it("a call the target's snapshot holds is applied only with its effect on disk", async () => {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  const root = (await s.info()).currentBranchId;
  await s.invoke("flaky_write", { path: file("c"), text: "c1" });
  fs.writeFileSync(file("h"), "by hand"); // kept in the next checkpoint
  await s.invoke("write_file", { path: file("a"), text: "w3" });
  await s.checkpoint({ name: "w3" });
  await s.invoke("flaky_write", { path: file("c"), text: "c6" });
  control.failUndo = true;
  await s.rollback(start.id, { scope: "both", onUndoError: "continue" });
  await s.switchBranch(root, { scope: "both", onUndoError: "continue" });
  control.failUndo = false;

  const w3 = (await s.toolTrack()).find((t) => t.tool === "write_file")!;
  expect(readOrNull(file("a")) === "w3").toBe(w3.applied);
});
