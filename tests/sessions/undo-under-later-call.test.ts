// Undo is LIFO over the whole applied set (issue 32 review): a replay stopped by a failing call leaves another branch's
// append applied, and a call made on the current branch then appends after it. Moving the world back to the branch
// undoes the later call first, then that other append (its undo puts the file back to its size before it), then
// replays the later call: its line is back on top, and it stays applied with its effect.
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { appendLineTool, flakyWriteTool, readOrNull, type FlakyControl } from "../fixtures/file-tools.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let fp: Forkpoint;
const control: FlakyControl = {};
const file = (rel: string) => path.join(dir, rel);

beforeEach(() => {
  dir = makeTempDir("forkpoint-undo-under-later-");
  control.failRun = false;
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [appendLineTool(), flakyWriteTool({ control })] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

it("an append made after another branch's applied append keeps its line when that one is undone", async () => {
  const s = await fp.createSession({ userId: "u" });
  const start = await s.checkpoint({ name: "start" });
  const root = (await s.info()).currentBranchId;
  await s.invoke("append_line", { path: file("log"), line: "Lx" });
  await s.invoke("flaky_write", { path: file("c"), text: "g" });
  await s.rollback(start.id);
  const other = (await s.info()).currentBranchId;
  control.failRun = true;
  await s.switchBranch(root).catch((e: { code: string }) => expect(e.code).toBe("REPLAY_FAILED"));
  control.failRun = false;
  await s.invoke("append_line", { path: file("log"), line: "Ly" });
  expect(readOrNull(file("log"))).toBe("Lx\nLy\n");

  await s.switchBranch(other);
  const ly = (await s.toolTrack()).find((t) => t.tool === "append_line")!;
  expect(ly.applied).toBe(true);
  expect(readOrNull(file("log"))).toBe("Ly\n");
});
