// Issue #32: a "both" move on another server, right after this one's move ended, found the files the move's replays
// wrote not yet known to forkpoint and refused them as changed outside it (WORKSPACE_DRIFT). What a move's tools change
// is forkpoint's own doing: known before the move is seen to end, so the other move plans on it and runs. Where no
// watcher follows the directory (macOS, a network file system) a move's replays are scanned only once it ends.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { engineOf } from "../../src/sessions/forkpoint.js";
import { workspaceStateFor } from "../../src/sessions/workspace/state.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";
import { nodeArgs } from "../fixtures/compiled.js";
import { tagLineTool, tagLinesOf } from "../fixtures/file-tools.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
let dir: string;
let fp: Forkpoint;

beforeEach(() => {
  dir = makeTempDir("forkpoint-both-not-drift-");
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [tagLineTool()] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

it("a 'both' rollback by another server as this one's switch ends is not refused as drift", async () => {
  const ws = path.join(dir, "ws");
  fs.mkdirSync(ws);
  const file = path.join(ws, "tag.txt");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  // This process follows the directory without a watcher: every scan walks it.
  const state = workspaceStateFor(engineOf(fp).ctx, s.id)!;
  state.watch?.close();
  state.watch = null;
  state.watchable = false;
  const c0 = await s.checkpoint({ name: "c0" });
  await s.append({ role: "user", content: "go" });
  await s.invoke("tag_line", { path: file, line: "x" });
  await s.checkpoint({ name: "c1" });
  await s.invoke("tag_line", { path: file, line: "y" });
  const first = (await s.info()).currentBranchId;
  await s.rollback(c0.id, { scope: "both" });
  expect(tagLinesOf(file)).toEqual([]);

  // The switch back restores c1's files (x), then replays y on them. As soon as it is finished (its event), this
  // process stops (the listener runs the other server to its end): whatever the switch does after that, the other
  // server's rollback does not see.
  let other: { undone?: string[]; code?: string; message?: string } | undefined;
  fp.on("switch", () => {
    if (other) return;
    const child = nodeArgs("tests/fixtures/both-rollback-child.ts");
    const run = spawnSync(process.execPath, [...child, path.join(dir, "forkpoint.db"), s.id, "u", c0.id], { cwd: ROOT, encoding: "utf8" });
    other = JSON.parse(run.stdout.trim().split("\n").at(-1) ?? "{}") as typeof other;
  });
  const back = await s.switchBranch(first, { scope: "both" });
  expect(back.replayed.map((t) => (t.args as { line: string }).line)).toEqual(["y"]);

  // The other server's rollback ran, undoing both calls, and the files hold exactly the calls still applied.
  expect(other).toEqual({ undone: ["y", "x"] });
  expect(tagLinesOf(file)).toEqual([]);
  const applied = (await s.toolTrack({ branchId: first })).filter((t) => t.applied);
  expect(applied).toEqual([]);
  expect((await s.diffFiles(c0.id, "disk")).modified).toEqual([]);
});
