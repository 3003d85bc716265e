// A checkpoint taken after a stopped move left a call undone and later calls went on holds their effects without it: a
// "both" move restoring it leaves that call unapplied, as it was, rather than replaying it over the later calls' effects.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint, SessionHandle } from "../../src/index.js";
import { appendLineTool, flakyWriteTool, readOrNull, writeFileTool, type FlakyControl } from "../fixtures/file-tools.js";
import { makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;
const control: FlakyControl = {};
const file = (rel: string) => path.join(ws, rel);
const track = async (s: SessionHandle) =>
  (await s.toolTrack()).map((t) => [(t.args as { text?: string; line?: string }).text ?? (t.args as { line: string }).line, t.applied]);

beforeEach(() => {
  dir = makeTempDir("forkpoint-undone-order-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fs.writeFileSync(file("a"), "0");
  control.failUndo = false;
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [writeFileTool(), appendLineTool(), flakyWriteTool({ control })] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

/**
 * flaky_write x, write_file a = "w5", append_line "L5" after checkpoint `start`; a rollback to `start` stops at
 * flaky_write's undo (a is "0" again, the log empty); then write_file a = "w7" and append_line "L7" on the same branch.
 */
async function hole() {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  const root = (await s.info()).currentBranchId;
  await s.invoke("flaky_write", { path: file("x"), text: "x" });
  await s.invoke("write_file", { path: file("a"), text: "w5" });
  await s.invoke("append_line", { path: file("log"), line: "L5" });
  control.failUndo = true;
  expect((await rejectionOf(s.rollback(start.id, { scope: "both" }))).code).toBe("UNDO_FAILED");
  control.failUndo = false;
  await s.invoke("write_file", { path: file("a"), text: "w7" });
  await s.invoke("append_line", { path: file("log"), line: "L7" });
  expect([readOrNull(file("a")), readOrNull(file("log"))]).toEqual(["w7", "L7\n"]);
  return { s, start, root };
}

for (const via of ["rollback", "switchBranch"] as const)
  it(`a checkpoint holding the later calls, restored by ${via}, keeps their effects on top`, async () => {
    const { s, start, root } = await hole();
    const later = await s.checkpoint({ name: "later" });
    await s.rollback(start.id, { scope: "both" });
    expect([readOrNull(file("a")), readOrNull(file("log"))]).toEqual(["0", null]);

    if (via === "rollback") await s.rollback(later.id, { scope: "both" });
    else await s.switchBranch(root, { scope: "both" });
    // The files the checkpoint captured, and the track as it was then.
    expect([readOrNull(file("a")), readOrNull(file("log"))]).toEqual(["w7", "L7\n"]);
    expect(await track(s)).toEqual([
      ["x", true],
      ["w5", false],
      ["L5", false],
      ["w7", true],
      ["L7", true],
    ]);
    // Every undo finds what its call wrote: back to the start, the start's files.
    await s.rollback(start.id, { scope: "conversation" });
    expect([readOrNull(file("a")), readOrNull(file("log")) ?? "", readOrNull(file("x"))]).toEqual(["0", "", null]);
  });
