// Issue 32: undo({ scope: "both" }) restores files holding one application of a call and marks the call with that
// application. A call runs (application 1), is replayed by a conversation rollback (application 2, held by a
// checkpoint), a "both" rollback undoes it and a "files" rollback restores application 1; undo({ scope: "both" })
// brings back the files of application 2, and the next conversation undo passes application 2's result, removing its
// line. An application's number is never reused (SQLite numbered a replay like the unapplied first run before).
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull, tempDir, tagLineTool } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

const tagLine = tagLineTool();

it("a both undo that restores another application of a call re-marks the call with it", async () => {
  const { fp } = dbs.open({ tools: [tagLine] });
  const ws = path.join(tempDir("forkpoint-both-undo-remark-"), "ws");
  fs.mkdirSync(ws);
  const log = path.join(ws, "log");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const c0 = await s.checkpoint({ name: "c0" });
  await s.invoke("tag_line", { path: log, line: "A" });
  const c1 = await s.checkpoint({ name: "c1" });
  const first = readOrNull(log);
  await s.rollback(c0.id, { scope: "both" });
  await s.rollback(c1.id, { scope: "conversation" });
  const replayed = readOrNull(log);
  expect(replayed).not.toBe(first);
  await s.checkpoint({ name: "replayed" });
  await s.rollback(c0.id, { scope: "both" });
  await s.rollback(c1.id, { scope: "files" });
  expect(readOrNull(log)).toBe(first);
  await s.undo({ scope: "both" });
  expect(readOrNull(log)).toBe(replayed);
  await s.undo({ scope: "conversation" });
  const track = await s.toolTrack({ branchId: (await s.info()).currentBranchId });
  expect(track.every((call) => !call.applied)).toBe(true);
  expect(readOrNull(log) ?? "").toBe("");
});
