// A checkpoint taken after a "both" move stopped by a failing undo holds files in which some of its lineage's calls are
// undone: a later "both" move restoring it replays those calls on top of its files, so files and tool track agree.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint, SessionHandle } from "../../src/index.js";
import { flakyWriteTool, readOrNull, writeFileTool, type FlakyControl } from "../fixtures/file-tools.js";
import { makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;
const control: FlakyControl = {};
const file = (rel: string) => path.join(ws, rel);
const files = () => ({ a: readOrNull(file("a")), b: readOrNull(file("b")), c: readOrNull(file("c")) });
const track = async (s: SessionHandle) => (await s.toolTrack()).map((t) => [t.tool, t.applied]);

beforeEach(() => {
  dir = makeTempDir("forkpoint-stopped-both-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  control.failUndo = false;
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [writeFileTool(), flakyWriteTool({ control })] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

/**
 * flaky_write b = "x", then write_file a = "1" after checkpoint `start`; a "both" rollback to `start` undoes
 * write_file, then stops at flaky_write's undo: a is "0" again, b still "x", the current branch unchanged.
 */
async function stoppedMove() {
  fs.writeFileSync(file("a"), "0");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("flaky_write", { path: file("b"), text: "x" });
  await s.invoke("write_file", { path: file("a"), text: "1" });
  const root = (await s.info()).currentBranchId;
  control.failUndo = true;
  expect((await rejectionOf(s.rollback(start.id, { scope: "both" }))).code).toBe("UNDO_FAILED");
  control.failUndo = false;
  expect((await s.info()).currentBranchId).toBe(root);
  expect(files()).toEqual({ a: "0", b: "x", c: null });
  expect(await track(s)).toEqual([
    ["flaky_write", true],
    ["write_file", false],
  ]);
  return { s, start, root };
}

it("a checkpoint after the stop, restored by switching back, gets the undone call replayed on its files", async () => {
  const { s, start, root } = await stoppedMove();
  await s.checkpoint({ name: "after the stop" });
  await s.rollback(start.id, { scope: "both" });
  expect(files()).toEqual({ a: "0", b: null, c: null });

  await s.switchBranch(root, { scope: "both" });
  expect(files()).toEqual({ a: "1", b: "x", c: null });
  expect(await track(s)).toEqual([
    ["flaky_write", true],
    ["write_file", true],
  ]);
  // Undone again from what it wrote: the files go back to the start's.
  await s.rollback(start.id, { scope: "both" });
  expect(files()).toEqual({ a: "0", b: null, c: null });
});

it("a call the snapshot does not hold is undone first when applied, then replayed on top of its files", async () => {
  const { s, root } = await stoppedMove();
  const after = await s.checkpoint({ name: "after the stop" });
  // The conversation move back to the branch's head replays write_file: applied again, a is "1".
  await s.switchBranch(root);
  expect(files().a).toBe("1");
  expect(await track(s)).toEqual([
    ["flaky_write", true],
    ["write_file", true],
  ]);

  const moved = await s.rollback(after.id, { scope: "both" });
  expect(moved.undone.map((t) => t.tool)).toEqual(["write_file"]);
  expect(moved.replayed.map((t) => t.tool)).toEqual(["write_file"]);
  expect(files()).toEqual({ a: "1", b: "x", c: null });
  expect(await track(s)).toEqual([
    ["flaky_write", true],
    ["write_file", true],
  ]);
});

it("a forced move saves the drift with the calls its files do not hold; moving back replays them", async () => {
  const { s, start, root } = await stoppedMove();
  fs.writeFileSync(file("c"), "by hand");
  const moved = await s.rollback(start.id, { scope: "both", force: true });
  expect(moved.savedDrift?.files).toEqual(["c"]);
  expect(files()).toEqual({ a: "0", b: null, c: null });

  await s.switchBranch(root, { scope: "both" });
  expect(files()).toEqual({ a: "1", b: "x", c: "by hand" });
  expect(await track(s)).toEqual([
    ["flaky_write", true],
    ["write_file", true],
  ]);
});
