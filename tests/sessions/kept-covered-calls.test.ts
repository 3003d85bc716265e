// A "both" move whose undo fails under "continue" keeps that call's paths as the world has them: a call the target's
// snapshot holds whose effect is in a kept path did not come back with the snapshot, so it is not marked applied. The
// kept paths are those the call's run recorded; calls without that record (an older database's) fall back to the
// paths that changed between the snapshots around them, a wider set.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { appendLineTool, flakyWriteTool, readOrNull, type FlakyControl } from "../fixtures/file-tools.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint, sqlOn } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;
const control: FlakyControl = {};
const file = (rel: string) => path.join(ws, rel);

beforeEach(() => {
  dir = makeTempDir("forkpoint-kept-covered-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  control.failUndo = false;
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [appendLineTool(), flakyWriteTool({ control })] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

it("a call the target's snapshot holds in a kept path stays unapplied, and comes back once by replay", async () => {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("append_line", { path: file("log"), line: "L1" });
  const withL1 = await s.checkpoint({ name: "L1" });
  const root = (await s.info()).currentBranchId;
  await s.rollback(start.id, { scope: "both" });
  // Another branch writes the same file by a call whose undo will fail: the log is that call's kept path.
  await s.invoke("flaky_write", { path: file("log"), text: "c1" });
  await s.invoke("append_line", { path: file("other"), line: "L2" });
  await s.checkpoint({ name: "other" });

  control.failUndo = true;
  const moved = await s.rollback(withL1.id, { scope: "both", onUndoError: "continue" });
  control.failUndo = false;
  expect(moved.failed).toHaveLength(1);
  expect(moved.files?.kept).toEqual(["log"]);
  const l1 = () => s.toolTrack({ branchId: root }).then((track) => track.find((t) => t.tool === "append_line")!.applied);
  expect([readOrNull(file("log")), readOrNull(file("other"))]).toEqual(["c1", null]);
  expect(await l1()).toBe(false);

  // Back on the branch that made it: c1 undone, L1 replayed once, never lost.
  await s.switchBranch(root, { scope: "conversation" });
  expect(readOrNull(file("log"))).toBe("L1\n");
  expect(await l1()).toBe(true);
});

it("without recorded paths (an older database), a kept path is any that changed across the failed call", async () => {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("append_line", { path: file("log"), line: "L1" });
  const withL1 = await s.checkpoint({ name: "L1" });
  const root = (await s.info()).currentBranchId;
  await s.rollback(start.id, { scope: "both" });
  // Another branch changes the same file after a call whose undo will fail: the log is one of that call's kept paths.
  await s.invoke("flaky_write", { path: file("c"), text: "c1" });
  await s.invoke("append_line", { path: file("log"), line: "L2" });
  await s.checkpoint({ name: "other" });
  // As a database from before calls' paths were recorded has it.
  await sqlOn(path.join(dir, "forkpoint.db"), `DELETE FROM call_paths`);

  control.failUndo = true;
  const moved = await s.rollback(withL1.id, { scope: "both", onUndoError: "continue" });
  control.failUndo = false;
  expect(moved.failed).toHaveLength(1);
  expect(moved.files?.kept).toEqual(["c", "log"]);
  const l1 = () => s.toolTrack({ branchId: root }).then((track) => track.find((t) => t.tool === "append_line")!.applied);
  expect(readOrNull(file("log"))).toBe("");
  expect(await l1()).toBe(false);

  // Back on the branch that made it: replayed once, never lost.
  await s.switchBranch(root, { scope: "conversation" });
  expect(readOrNull(file("log"))).toBe("L1\n");
  expect(await l1()).toBe(true);
});
