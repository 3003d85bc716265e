// Sessions, their events, the operator listings, and imported calls: SQLite's statements and the port's SessionsTx.
import type Database from "better-sqlite3";
import type { EventRow, SessionRow, SessionsTx, TimelineRow, UserRow } from "../port/index.js";
import { FORGET_UNDONE, SESSION_COLS, SESSION_INFO_COLS, sessionRow } from "./columns.js";
import { prepare, type RowMode } from "./object-rows.js";
import { LIST_ALL_SESSIONS, LIST_SESSIONS, listedSessionRow } from "./session-listing.js";

/** Rows of one timeline source below the page's key (createdAt, then source, then seq, all descending). */
const below = (source: string) =>
  `created_at <= @at AND (created_at < @at OR '${source}' < @source OR ('${source}' = @source AND seq < @seq))`;

/**
 * A page of each timeline stream below the key: along the index it is read by (`ordered`: times never decrease along
 * it), or sorted by time (a session whose times may go back). Entries come one branch at a time.
 */
function timelineStreams(ordered: boolean) {
  const by = (walk: string) => (ordered ? walk : "created_at DESC, seq DESC");
  return {
    entries: `SELECT 'entry' AS source, kind, id AS refId, branch_id AS branchId, coalesce(role, tool) AS detail, created_at AS createdAt, seq
      FROM entries INDEXED BY entries_branch_position WHERE branch_id = @branchId AND ${below("entry")}
      ORDER BY ${by("position DESC")} LIMIT @limit`,
    others: `SELECT * FROM (SELECT 'checkpoint' AS source, 'checkpoint' AS kind, id AS refId, branch_id AS branchId, name AS detail,
        created_at AS createdAt, seq FROM checkpoints INDEXED BY checkpoints_session_user_seq
        WHERE user_id = @userId AND session_id = @sessionId AND (expires_at IS NULL OR expires_at > @now) AND ${below("checkpoint")} ORDER BY ${by("seq DESC")} LIMIT @limit)
      UNION ALL SELECT * FROM (SELECT 'branch', 'branch', id, id, reason || ' at position ' || fork_position, created_at, seq FROM branches
        WHERE session_id = @sessionId AND parent_id IS NOT NULL AND ${below("branch")} ORDER BY created_at DESC, seq DESC LIMIT @limit)
      UNION ALL SELECT * FROM (SELECT 'event', kind, ref_id, branch_id, detail, created_at, seq FROM events INDEXED BY events_session_seq
        WHERE session_id = @sessionId AND ${below("event")} ORDER BY ${by("seq DESC")} LIMIT @limit)`,
  };
}

/** The timeline's order: newest first, then source and seq descending (what a cursor's key encodes). */
const newestFirst = (a: TimelineRow, b: TimelineRow) =>
  b.createdAt - a.createdAt || (a.source < b.source ? 1 : a.source > b.source ? -1 : 0) || b.seq - a.seq;

/**
 * Children before parents (foreign keys are on). Each reads by index, and so does each foreign-key check a deleted row
 * makes (tests check the plans): the work follows the session's own rows, not the database's.
 */
export const DELETE_SESSION = [
  `DELETE FROM lg_writes WHERE session_id = ?`,
  `DELETE FROM lg_blobs WHERE session_id = ?`,
  `DELETE FROM lg_checkpoints WHERE session_id = ?`,
  `DELETE FROM lg_threads WHERE session_id = ?`,
  `DELETE FROM checkpoint_files WHERE checkpoint_id IN (SELECT id FROM checkpoints WHERE session_id = ?)`,
  `DELETE FROM checkpoint_metadata WHERE cp_seq IN (SELECT seq FROM checkpoints WHERE session_id = ?)`,
  `DELETE FROM tool_results WHERE entry_id IN (SELECT e.id FROM entries e JOIN branches b ON b.id = e.branch_id WHERE b.session_id = ?)`,
  `DELETE FROM applied WHERE session_id = ?`,
  `DELETE FROM call_paths WHERE session_id = ?`,
  `DELETE FROM replay_results WHERE session_id = ?`,
  `DELETE FROM set_aside WHERE session_id = ?`,
  `DELETE FROM running_calls WHERE session_id = ?`,
  `DELETE FROM imported_calls WHERE session_id = ?`,
  `DELETE FROM move_steps WHERE move_id IN (SELECT id FROM moves WHERE session_id = ?)`,
  `DELETE FROM moves WHERE session_id = ?`,
  `DELETE FROM move_history WHERE session_id = ?`,
  `DELETE FROM events WHERE session_id = ?`,
  `DELETE FROM requests WHERE session_id = ?`,
  `DELETE FROM workspace_stats WHERE session_id = ?`,
  `DELETE FROM workspaces WHERE session_id = ?`,
  `DELETE FROM checkpoint_holds WHERE session_id = ?`,
  `DELETE FROM checkpoints WHERE session_id = ?`,
  `DELETE FROM entries WHERE branch_id IN (SELECT id FROM branches WHERE session_id = ?)`,
  `DELETE FROM branches WHERE session_id = ?`,
  `DELETE FROM sessions WHERE id = ?`,
];

export function sessionsTx(db: Database.Database): SessionsTx {
  const p = (sql: string, mode?: RowMode) => prepare(db, sql, mode);
  let deletes: Database.Statement[] | undefined;
  const s = {
    allSessions: p(LIST_ALL_SESSIONS),
    // GROUP BY over the (user_id, seq) index: a page reads only its users' sessions. A session's updatedAt counts its
    // current branch's last entry, as info() does.
    users: p(`SELECT user_id AS userId, count(*) AS sessions,
        max(max(updated_at, coalesce((SELECT created_at FROM entries WHERE branch_id = current_branch_id ORDER BY position DESC LIMIT 1), 0))) AS updatedAt
      FROM sessions WHERE user_id > ? GROUP BY user_id ORDER BY user_id LIMIT ?`),
    insertSession: p(`INSERT INTO sessions (id, user_id, title, metadata, current_branch_id, origin_session_id, origin_checkpoint_id,
      created_at, updated_at, times_ordered)
    VALUES (@id, @userId, @title, @metadata, @currentBranchId, @originSessionId, @originCheckpointId, @createdAt, @updatedAt, 1)`),
    getSession: p(`SELECT ${SESSION_COLS} FROM sessions WHERE id = ?`),
    getSessionInfo: p(`SELECT ${SESSION_INFO_COLS} FROM sessions WHERE id = ?`),
    listSessions: p(LIST_SESSIONS),
    countUserSessions: p(`SELECT count(*) FROM sessions WHERE user_id = ?`, "pluck"),
    userSessionIds: p(`SELECT id, seq FROM sessions WHERE user_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`),
    setCurrent: p(`UPDATE sessions SET current_branch_id = ?, updated_at = ? WHERE id = ?`),
    setCurrentAndTop: p(`UPDATE sessions SET current_branch_id = ?, updated_at = ?, move_top = ?, move_redo = NULL WHERE id = ?`),
    // The usual case, nothing to redo, in one statement: it changes no row when there is something to forget first.
    setCurrentAndTopIfNoRedo: p(
      `UPDATE sessions SET current_branch_id = ?, updated_at = ?, move_top = ? WHERE id = ? AND move_redo IS NULL`,
    ),
    forgetUndone: p(FORGET_UNDONE),
    redoOf: p(`SELECT move_redo FROM sessions WHERE id = ?`, "pluck"),
    updateSession: p(`UPDATE sessions SET title = CASE WHEN ? THEN ? ELSE title END, metadata = CASE WHEN ? THEN ? ELSE metadata END,
    updated_at = ? WHERE id = ?`),
    markHasTools: p(`UPDATE sessions SET has_tools = 1 WHERE id = ? AND has_tools = 0`),
    allSessionIds: p(`SELECT id FROM sessions ORDER BY seq`, "pluck"),
    insertRecordedEvent: p(
      `INSERT INTO events (session_id, kind, ref_id, branch_id, detail, created_at) VALUES (@sessionId, @kind, @refId, @branchId, @detail, @createdAt)`,
    ),
    // Never before the session's newest event (another process's clock may be behind): the timeline walks events by seq.
    insertEvent:
      p(`INSERT INTO events (session_id, kind, ref_id, branch_id, detail, created_at) VALUES (@sessionId, @kind, @refId, @branchId, @detail,
      max(@createdAt, coalesce((SELECT created_at FROM events WHERE session_id = @sessionId ORDER BY seq DESC LIMIT 1), 0)))`),
    sessionEvents: p(`SELECT seq, session_id AS sessionId, kind, ref_id AS refId, branch_id AS branchId, detail, created_at AS createdAt
    FROM events WHERE session_id = ? ORDER BY seq`),
    // Each half of the timeline is read newest first from an index, at most a page of each (one per branch for
    // entries), then merged: a page costs the same however long the session is.
    timelineBranches: p(`SELECT id FROM branches WHERE session_id = ?`, "pluck"),
    // Each branch's newest entry below the key, one index probe a branch in one statement: the page then reads only
    // the branches that can still reach it, newest first.
    timelineTops: p(`SELECT b.id AS branchId, (SELECT created_at FROM entries INDEXED BY entries_branch_position
      WHERE branch_id = b.id AND ${below("entry")} ORDER BY position DESC LIMIT 1) AS top
      FROM branches b WHERE b.session_id = @sessionId`),
    timesOrdered: p(`SELECT times_ordered FROM sessions WHERE id = ?`, "pluck"),
    markTimesUnordered: p(`UPDATE sessions SET times_ordered = 0 WHERE id = ?`),
    timelineEntries: p(timelineStreams(true).entries),
    timelineOthers: p(timelineStreams(true).others),
    sortedTimelineEntries: p(timelineStreams(false).entries),
    sortedTimelineOthers: p(timelineStreams(false).others),
    setRetention: p(`UPDATE sessions SET retention = ?, retention_aged_at = ? WHERE id = ?`),
    retentionOf: p(`SELECT retention FROM sessions WHERE id = ?`, "pluck"),
    // A policy set on a session that had none: its checkpoints join retention's name index (checkpoints.weighed).
    markWeighed: p(`UPDATE checkpoints SET weighed = 1 WHERE session_id = ? AND weighed = 0`),
    withRetention: p(
      `SELECT id FROM sessions WHERE retention IS NOT NULL AND (@sessionId IS NULL OR id = @sessionId) ORDER BY seq`,
      "pluck",
    ),
    insertImportedCall: p(`INSERT INTO imported_calls (entry_id, session_id) VALUES (?, ?)`),
    importedCalls: p(`SELECT entry_id FROM imported_calls WHERE session_id = ?`, "pluck"),
    sessionTaken: p(`SELECT 1 FROM sessions WHERE id = ?`, "pluck"),
    branchTaken: p(`SELECT 1 FROM branches WHERE id = ?`, "pluck"),
    entryTaken: p(`SELECT 1 FROM entries WHERE id = ?`, "pluck"),
    checkpointTaken: p(`SELECT 1 FROM checkpoints WHERE id = ?`, "pluck"),
  };
  return {
    *insertSession(row: Omit<SessionRow, "seq">) {
      s.insertSession.run(row);
    },
    *getSession(id: string) {
      return sessionRow(s.getSession.get(id));
    },
    *getSessionInfo(id: string) {
      return sessionRow(s.getSessionInfo.get(id));
    },
    *takenId(ids: { sessions: string[]; branches: string[]; entries: string[]; checkpoints: string[] }) {
      const kinds = [
        [s.sessionTaken, ids.sessions],
        [s.branchTaken, ids.branches],
        [s.entryTaken, ids.entries],
        [s.checkpointTaken, ids.checkpoints],
      ] as const;
      for (const [taken, list] of kinds) for (const id of list) if (taken.get(id) !== undefined) return id;
      return undefined;
    },
    *listSessions(userId: string, beforeSeq: number | undefined, limit: number) {
      return s.listSessions.all({ userId, before: beforeSeq ?? Number.MAX_SAFE_INTEGER, limit }).map(listedSessionRow);
    },
    *countUserSessions(userId: string) {
      return s.countUserSessions.get(userId) as number;
    },
    *userSessionIds(userId: string, beforeSeq: number | undefined, limit: number) {
      return s.userSessionIds.all(userId, beforeSeq ?? Number.MAX_SAFE_INTEGER, limit) as { id: string; seq: number }[];
    },
    *setCurrentBranch(sessionId: string, branchId: string, at: number, top?: string, keepUndone = false) {
      if (top === undefined) {
        s.setCurrent.run(branchId, at, sessionId);
        return;
      }
      if (s.setCurrentAndTopIfNoRedo.run(branchId, at, top, sessionId).changes === 1) return;
      const redo = s.redoOf.get(sessionId) as string | null | undefined;
      if (redo && !keepUndone) s.forgetUndone.run(redo);
      s.setCurrentAndTop.run(branchId, at, top, sessionId);
    },

    *updateSession(sessionId: string, fields: { title?: string | null; metadata?: string | null }, at: number) {
      const { title, metadata } = fields;
      s.updateSession.run(title === undefined ? 0 : 1, title ?? null, metadata === undefined ? 0 : 1, metadata ?? null, at, sessionId);
    },

    *markHasTools(sessionId: string) {
      s.markHasTools.run(sessionId);
    },
    *allSessionIds() {
      return s.allSessionIds.all() as string[];
    },

    *deleteSession(sessionId: string) {
      // Prepared on first use: deleteUser runs them for each of a user's sessions.
      deletes ??= DELETE_SESSION.map((sql) => db.prepare(sql));
      for (const statement of deletes) statement.run(sessionId);
    },
    *insertEvent(row: Omit<EventRow, "seq">, how?: { asRecorded?: boolean }) {
      (how?.asRecorded ? s.insertRecordedEvent : s.insertEvent).run(row);
    },
    *sessionEvents(sessionId: string) {
      return s.sessionEvents.all(sessionId) as EventRow[];
    },
    *timeline(
      userId: string,
      sessionId: string,
      before: { createdAt: number; seq: number; source: string } | undefined,
      limit: number,
      now: number,
    ) {
      const key = {
        at: before?.createdAt ?? Number.MAX_SAFE_INTEGER,
        source: before?.source ?? "~",
        seq: before?.seq ?? Number.MAX_SAFE_INTEGER,
        limit,
      };
      const ordered = s.timesOrdered.get(sessionId) === 1;
      const [entries, others] = ordered ? [s.timelineEntries, s.timelineOthers] : [s.sortedTimelineEntries, s.sortedTimelineOthers];
      const rows = others.all({ ...key, userId, sessionId, now }) as TimelineRow[];
      const page = (more: TimelineRow[]) => more.sort(newestFirst).slice(0, limit);
      if (!ordered) {
        for (const branchId of s.timelineBranches.all(sessionId) as string[])
          rows.push(...(entries.all({ ...key, branchId }) as TimelineRow[]));
        return page(rows);
      }
      // Times never decrease along a branch: once the page is full of rows newer than a branch's newest, no older
      // branch can reach it.
      const tops = (s.timelineTops.all({ ...key, sessionId }) as { branchId: string; top: number | null }[])
        .filter((t): t is { branchId: string; top: number } => t.top !== null)
        .sort((a, b) => b.top - a.top);
      let kept = page(rows);
      for (const { branchId, top } of tops) {
        if (kept.length >= limit && kept[limit - 1]!.createdAt > top) break;
        kept = page([...kept, ...(entries.all({ ...key, branchId }) as TimelineRow[])]);
      }
      return kept;
    },

    *markTimesUnordered(sessionId: string) {
      s.markTimesUnordered.run(sessionId);
    },

    *setRetention(sessionId: string, retention: string | null, agedAt: number) {
      const had = s.retentionOf.get(sessionId) as string | null | undefined;
      s.setRetention.run(retention, agedAt, sessionId);
      if (retention !== null && (had === null || had === undefined)) s.markWeighed.run(sessionId);
    },
    *sessionsWithRetention(sessionId?: string) {
      return s.withRetention.all({ sessionId: sessionId ?? null }) as string[];
    },
    *insertImportedCall(entryId: string, sessionId: string) {
      s.insertImportedCall.run(entryId, sessionId);
    },
    *importedCalls(sessionId: string) {
      return new Set(s.importedCalls.all(sessionId) as string[]);
    },
    *listAllSessions(beforeSeq: number | undefined, limit: number) {
      return s.allSessions.all({ before: beforeSeq ?? Number.MAX_SAFE_INTEGER, limit }).map(listedSessionRow);
    },
    *listUsers(afterUserId: string | undefined, limit: number) {
      return s.users.all(afterUserId ?? "", limit) as UserRow[];
    },
  };
}
