// Issue 32: a "both" move with nothing to run re-marks only calls whose effect is in the files it restores. A call
// acting only OUTSIDE the workspace keeps the application it has: after a replay (application 2), a second "both"
// rollback to the same checkpoint leaves it pointing at the replay's result, so a later undo removes the replay's line.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull, tempDir, tagLineTool } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

const tagLine = tagLineTool();

it("an outside call replayed, then kept by a both move that runs nothing, is undone with the replay's result", async () => {
  const { fp } = dbs.open({ tools: [tagLine] });
  const root = tempDir("forkpoint-both-noop-outside-");
  const ws = path.join(root, "ws");
  fs.mkdirSync(ws);
  const outside = path.join(root, "outside");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const c0 = await s.checkpoint({ name: "c0" });
  await s.invoke("tag_line", { path: outside, line: "A" });
  const c1 = await s.checkpoint({ name: "c1" });
  await s.rollback(c0.id, { scope: "conversation" });
  await s.rollback(c1.id, { scope: "both" });
  const replayed = readOrNull(outside);
  expect(replayed).toMatch(/^A#\d+\n$/);
  await s.rollback(c1.id, { scope: "both" });
  expect(readOrNull(outside)).toBe(replayed);
  await s.rollback(c0.id, { scope: "conversation" });
  const track = await s.toolTrack({ branchId: (await s.info()).currentBranchId });
  expect(track.every((call) => !call.applied)).toBe(true);
  expect(readOrNull(outside)).toBe("");
});
