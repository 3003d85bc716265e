// Issue 32, scope "both": a call that a files-and-conversation move leaves applied, while the snapshot it restores
// holds an earlier application of it, is undone later with the result of that application. An append runs on an empty
// file (snapshot "L0\n"), is replayed on top of an irreversible note ("N\nL0\n", size before 2), and a "both" rollback
// to the snapshot keeps the append applied: its later undo truncates the file to the first run's size (0). The note is
// recorded with `recordToolCall` (no recorded paths: taken to be in the snapshot, so the restore rewrites its file); an
// invoked one's paths would stay as they are (see both-keeps-left-applied.test.ts).
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { appendLineTool, readOrNull, tempDir, noteLineTool } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

async function replayedOverNote() {
  const { fp } = dbs.open({ tools: [appendLineTool(), noteLineTool] });
  const ws = path.join(tempDir("forkpoint-both-undo-result-"), "ws");
  fs.mkdirSync(ws);
  const log = path.join(ws, "log");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.append({ role: "user", content: "note L0" });
  await s.invoke("append_line", { path: log, line: "L0" });
  const noted = await s.checkpoint({ name: "noted" });
  const first = (await s.info()).currentBranchId;
  await s.rollback(start.id, { scope: "conversation" });
  fs.appendFileSync(log, "N\n");
  await s.recordToolCall({ tool: "note_line", args: { path: log, line: "N" }, result: null });
  await s.checkpoint({ name: "noted by hand" });
  await s.switchBranch(first, { scope: "conversation" });
  expect(readOrNull(log)).toBe("N\nL0\n");
  return { s, ws, log, start, noted, first };
}

it("a call the move keeps applied is undone to the size of the application the snapshot holds", async () => {
  const { s, ws, log, start, noted, first } = await replayedOverNote();
  // A later call: the rollback undoes it (a journaled move), keeping the append applied.
  await s.invoke("append_line", { path: path.join(ws, "other"), line: "Z" });
  await s.rollback(noted.id, { scope: "both" });
  expect(readOrNull(log)).toBe("L0\n");
  await s.rollback(start.id, { scope: "conversation" });
  expect((await s.toolTrack({ branchId: first }))[0]!.applied).toBe(false);
  expect(readOrNull(log)).toBe("");
});

// A "both" move to where the session already is (nothing to undo or replay) still re-marks a call the restored snapshot
// holds by another application: its later undo truncates to the size that snapshot holds, not the replay's 2 bytes.
it("a call kept applied by a move that runs nothing is undone to the size the snapshot holds", async () => {
  const { s, log, start, noted, first } = await replayedOverNote();
  await s.rollback(noted.id, { scope: "both" });
  expect(readOrNull(log)).toBe("L0\n");
  await s.rollback(start.id, { scope: "conversation" });
  expect((await s.toolTrack({ branchId: first }))[0]!.applied).toBe(false);
  expect(readOrNull(log)).toBe("");
});
