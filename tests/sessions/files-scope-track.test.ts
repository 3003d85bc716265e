// Issue 32: a move with scope "files" restores a snapshot's files and brings the tool track with them: an append the
// snapshot holds, undone before, is marked applied again with its restored line, so a later move does not replay it on
// top of that line (it lands once).
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { appendLineTool, readOrNull } from "../fixtures/file-tools.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;
const file = (rel: string) => path.join(ws, rel);

beforeEach(() => {
  dir = makeTempDir("forkpoint-files-scope-track-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [appendLineTool()] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

it("a files-only restore of a snapshot holding an undone append, then a switch back: the line once", async () => {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("append_line", { path: file("log"), line: "L1" });
  const withL1 = await s.checkpoint({ name: "L1" });
  const root = (await s.info()).currentBranchId;
  await s.rollback(start.id, { scope: "both" });
  await s.rollback(withL1.id, { scope: "files" });
  expect(readOrNull(file("log"))).toBe("L1\n");

  await s.switchBranch(root, { scope: "conversation" });
  expect(readOrNull(file("log"))).toBe("L1\n");
});
