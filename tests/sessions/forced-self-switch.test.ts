// A forced "both" switch to the current branch does nothing, as any switch to it: no file moves, so no drift is saved,
// and its calls keep their files and stay applied (issue 32 review).
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { appendLineTool, readOrNull, writeFileTool } from "../fixtures/file-tools.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;
const file = (rel: string) => path.join(ws, rel);
const files = () => ["a", "log", "h"].map((f) => readOrNull(file(f)));

beforeEach(() => {
  dir = makeTempDir("forkpoint-forced-self-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [writeFileTool(), appendLineTool()] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

it("a forced switch to the current branch keeps its calls' files, applied, and the drift as it is", async () => {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("write_file", { path: file("a"), text: "w1" });
  await s.invoke("append_line", { path: file("log"), line: "L1" });
  fs.writeFileSync(file("h"), "by hand");
  const root = (await s.info()).currentBranchId;

  const moved = await s.switchBranch(root, { scope: "both", force: true });
  expect(moved.savedDrift).toBeUndefined();
  expect(moved.files).toBeUndefined();
  expect(moved.branch.id).toBe(root);
  expect(files()).toEqual(["w1", "L1\n", "by hand"]);
  expect((await s.toolTrack()).map((t) => t.applied)).toEqual([true, true]);
  expect((await s.listCheckpoints()).items).toHaveLength(1);
  await s.checkpoint({ name: "by hand" });

  // Away and back: each call undone once, replayed once.
  await s.rollback(start.id, { scope: "both" });
  expect(files()).toEqual([null, null, null]);
  await s.switchBranch(root, { scope: "both" });
  expect(files()).toEqual(["w1", "L1\n", "by hand"]);
  expect((await s.toolTrack()).map((t) => t.applied)).toEqual([true, true]);
});
