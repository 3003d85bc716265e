// A move under "continue" whose undo of a call fails leaves that call applied: when the move would also replay it (a
// "both" move to a lineage holding a call made after its snapshot, landed there with `after` while the session was
// elsewhere), it is not run again, so its effect is not doubled and its recorded result (what a later undo puts back)
// stays the first run's (issue 32 review).
import fs from "node:fs";
import path from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import type { Forkpoint } from "../../src/index.js";
import { appendLineTool, flakyWriteTool, readOrNull, type FlakyControl, type ToolCallRecord } from "../fixtures/file-tools.js";
import { makeTempDir, removeDir } from "../helpers.js";
import { openForkpoint } from "../fixtures/backend.js";

let dir: string;
let ws: string;
let fp: Forkpoint;
const control: FlakyControl = {};
const calls: ToolCallRecord[] = [];
const file = (rel: string) => path.join(ws, rel);

beforeEach(() => {
  dir = makeTempDir("forkpoint-failed-undo-no-replay-");
  ws = path.join(dir, "project");
  fs.mkdirSync(ws);
  control.failUndo = false;
  calls.length = 0;
  fp = openForkpoint({ path: path.join(dir, "forkpoint.db"), tools: [appendLineTool(), flakyWriteTool({ control, calls })] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

it("a call whose undo failed is not replayed by the same move, and a later undo restores what its first run found", async () => {
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  const [question] = await s.append({ role: "user", content: "write c" });
  const root = (await s.info()).currentBranchId;
  // Another tab moved the session away; the first one's call lands on its own lineage, after its question.
  await s.rollback(start.id, { scope: "conversation" });
  await s.invoke("append_line", { path: file("w"), line: "w" });
  await s.invoke("flaky_write", { path: file("c"), text: "c1" }, { after: question!.id });

  control.failUndo = true;
  const moved = await s.switchBranch(root, { scope: "both", onUndoError: "continue" });
  control.failUndo = false;
  expect(moved.replayed).toEqual([]);
  expect(moved.failed.map((f) => f.step)).toEqual(["undo", "replay"]);
  expect(calls.filter((c) => c.op === "run")).toHaveLength(1);
  expect(readOrNull(file("c"))).toBe("c1");
  expect((await s.toolTrack()).map((t) => t.applied)).toEqual([true]);

  await s.rollback(start.id, { scope: "both" });
  expect(readOrNull(file("c"))).toBeNull();
});
