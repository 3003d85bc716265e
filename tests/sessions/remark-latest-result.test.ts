// A call that a move marks applied again with the files it restores (scope "both" or "files") carries the result of its
// most recent application, not its first run's: a later undo gets the result that matches the files (DESIGN.md,
// "Replay ... a later undo of that invocation receives the result of its most recent application").
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { appendLineTool, readOrNull, tempDir, type ToolCallRecord } from "../fixtures/file-tools.js";
import { onPostgres, sqlOn } from "../fixtures/backend.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/**
 * A session whose append call ran first at size 0, then was replayed at size 5 (after a hand edit), and a checkpoint
 * `at` that captures the file with that replay's line. The call is then undone by a "both" rollback to `start`.
 */
async function replayedAtAnotherSize(calls: ToolCallRecord[]) {
  const { fp, path: dbFile } = dbs.open({ tools: [appendLineTool({ calls })] });
  const ws = tempDir();
  const log = path.join(ws, "log.txt");
  fs.writeFileSync(log, "");
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("append_line", { path: log, line: "x" }); // run at size 0
  const head = (await s.info()).currentBranchId;
  await s.rollback(start.id, { scope: "conversation" });
  expect(readOrNull(log)).toBe("");
  fs.writeFileSync(log, "hand\n");
  await s.checkpoint({ name: "hand" }); // kept: a "conversation" move's replay does not write over unsaved drift
  await s.switchBranch(head, { scope: "conversation" }); // replayed at size 5
  expect(readOrNull(log)).toBe("hand\nx\n");
  await s.checkpoint({ name: "at" }); // captures the replay's line after the hand edit
  await s.rollback(start.id, { scope: "both" });
  expect(readOrNull(log)).toBe("");
  return { fp, dbFile, s, log, start, head };
}

describe("a call marked applied again with restored files", () => {
  it('by a scope "both" move: a later undo gets the result of its most recent application', async () => {
    const calls: ToolCallRecord[] = [];
    const { s, log, start, head } = await replayedAtAnotherSize(calls);
    const back = await s.switchBranch(head, { scope: "both" });
    expect(back.replayed).toEqual([]);
    expect(readOrNull(log)).toBe("hand\nx\n");
    const before = calls.length;
    await s.rollback(start.id, { scope: "conversation" });
    expect(calls.slice(before)).toMatchObject([{ op: "undo", result: { sizeBefore: 5 } }]);
    expect(readOrNull(log)).toBe("hand\n");
  });

  it('by a scope "files" move: a later undo gets the result of its most recent application', async () => {
    const calls: ToolCallRecord[] = [];
    const { s, log, start, head } = await replayedAtAnotherSize(calls);
    await s.switchBranch(head, { scope: "files" });
    expect(readOrNull(log)).toBe("hand\nx\n");
    const before = calls.length;
    await s.rollback(start.id, { scope: "conversation" });
    expect(calls.slice(before)).toMatchObject([{ op: "undo", result: { sizeBefore: 5 } }]);
    expect(readOrNull(log)).toBe("hand\n");
  });

  // The replay's result is kept past prune, which deletes the move that ran it (and its journal): the call unapplied
  // when prune runs comes back with it, not with its first run's.
  it.each(["both", "files"] as const)(
    'by a scope "%s" move after prune deleted the move that replayed it: a later undo gets the replay\'s result',
    async (scope) => {
      const calls: ToolCallRecord[] = [];
      const { fp, s, log, start, head } = await replayedAtAnotherSize(calls);
      expect((await fp.prune()).moves).toBeGreaterThan(0);
      await s.switchBranch(head, { scope });
      expect(readOrNull(log)).toBe("hand\nx\n");
      const before = calls.length;
      await s.rollback(start.id, { scope: "conversation" });
      expect(calls.slice(before)).toMatchObject([{ op: "undo", result: { sizeBefore: 5 } }]);
      expect(readOrNull(log)).toBe("hand\n");
    },
  );

  // A database written before replay results were kept holds the replay in its move journal only (until prune).
  it("replayed before results were kept, its move still journaled: a later undo gets the journal's replay result", async () => {
    const calls: ToolCallRecord[] = [];
    const { dbFile, s, log, start, head } = await replayedAtAnotherSize(calls);
    await sqlOn(dbFile, `DELETE FROM replay_results`);
    await s.switchBranch(head, { scope: "both" });
    expect(readOrNull(log)).toBe("hand\nx\n");
    const before = calls.length;
    await s.rollback(start.id, { scope: "conversation" });
    expect(calls.slice(before)).toMatchObject([{ op: "undo", result: { sizeBefore: 5 } }]);
    expect(readOrNull(log)).toBe("hand\n");
  });

  // A database migrated to kept replay results finds the replays its journal holds kept too: prune then loses none.
  it("upgraded from before results were kept: the journal's replay result survives a later prune", async () => {
    const calls: ToolCallRecord[] = [];
    const { fp, dbFile, s, log, start, head } = await replayedAtAnotherSize(calls);
    await fp.close();
    const migrations = onPostgres ? "drizzle.__forkpoint_migrations" : "__drizzle_migrations";
    // The database as it was before replay_results: that migration and every later one undone, then unrecorded.
    const journal = JSON.parse(fs.readFileSync(`drizzle/${onPostgres ? "postgres" : "sqlite"}/meta/_journal.json`, "utf8")) as {
      entries: { tag: string; when: number }[];
    };
    const since = journal.entries.find((e) => e.tag.endsWith("_replay_results"))!.when;
    await sqlOn(dbFile, `DROP TABLE replay_results`);
    await sqlOn(dbFile, `DROP TABLE set_aside`);
    await sqlOn(dbFile, `DROP INDEX checkpoints_request`);
    await sqlOn(dbFile, `DROP INDEX moves_running`);
    await sqlOn(dbFile, `DROP INDEX checkpoints_branch_kind_seq`);
    await sqlOn(dbFile, `ALTER TABLE call_paths DROP COLUMN outputs`);
    await sqlOn(dbFile, `ALTER TABLE call_paths DROP COLUMN hand_edited`);
    await sqlOn(dbFile, `ALTER TABLE call_paths DROP COLUMN hand_edit_ids`);
    await sqlOn(dbFile, `ALTER TABLE tool_results DROP COLUMN named_files`);
    await sqlOn(dbFile, `ALTER TABLE branches DROP COLUMN move_to_branch_id`);
    await sqlOn(dbFile, `ALTER TABLE branches DROP COLUMN continued_by`);
    await sqlOn(dbFile, `ALTER TABLE branches DROP COLUMN continued_at`);
    await sqlOn(dbFile, `ALTER TABLE branches DROP COLUMN continued_from`);
    for (const column of ["request_id", "request_fingerprint", "request_answer"])
      await sqlOn(dbFile, `ALTER TABLE checkpoints DROP COLUMN ${column}`);
    await sqlOn(dbFile, `DELETE FROM ${migrations} WHERE created_at >= ${since}`);
    const upgraded = dbs.open({ path: dbFile, tools: [appendLineTool({ calls })] }).fp;
    expect((await upgraded.prune()).moves).toBeGreaterThan(0);
    const again = await upgraded.getSession(s.id, { userId: "u" });
    await again.switchBranch(head, { scope: "both" });
    expect(readOrNull(log)).toBe("hand\nx\n");
    const before = calls.length;
    await again.rollback(start.id, { scope: "conversation" });
    expect(calls.slice(before)).toMatchObject([{ op: "undo", result: { sizeBefore: 5 } }]);
    expect(readOrNull(log)).toBe("hand\n");
  });

  // The world's knowledge, as the applied set is: a copy's calls ran in another world, whose files are not its own.
  it("keeps a replay's result for its own session only: a clone and an import carry none", async () => {
    const calls: ToolCallRecord[] = [];
    const { fp, dbFile, s } = await replayedAtAnotherSize(calls);
    const kept = (file: string, sessionId: string) => sqlOn(file, `SELECT result FROM replay_results WHERE session_id = $1`, [sessionId]);
    expect(await kept(dbFile, s.id)).toHaveLength(1);
    const clone = await fp.clone(s.id, { userId: "u" });
    // An import keeps ids: into another database.
    const other = dbs.open({ tools: [appendLineTool({ calls })] });
    const imported = await other.fp.importSession(await fp.exportSession(s.id, { userId: "u" }), { userId: "u" });
    expect([await kept(dbFile, clone.id), await kept(other.path, imported.id)]).toEqual([[], []]);
  });
});
