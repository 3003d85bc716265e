// Sessions, their events, the operator listings, and imported calls: PostgreSQL's statements and the port's SessionsTx.
import type { EventRow, NewSession, SessionRow, SessionsTx, TimelineKey, TimelineRow, UserRow } from "../port/index.js";
import { FORGET_UNDONE, SESSION_COLS, SESSION_INFO_COLS, SESSION_UPDATED } from "./columns.js";
import { LIST_ALL_SESSIONS, LIST_SESSIONS, listedSessionRow, type ListedTuple } from "./session-listing.js";
import { insertRow, insertWith } from "./batch.js";
import type { Sql } from "./sql.js";

/** Rows of one timeline source below the page's key ($3 time, $4 source, $5 seq; all descending). */
const below = (source: string) => `created_at <= $3::float8 AND (created_at < $3::float8
  OR '${source}' < $4::text COLLATE "C" OR ('${source}' = $4::text AND seq < $5::bigint))`;

/**
 * Each half of the timeline is read newest first, at most a page of each (one per branch for entries, through
 * LATERAL), then merged. With `ordered` (times never decrease along each stream) the streams are walked along the
 * indexes they have (a branch's positions, the session's checkpoint and event seqs); otherwise each is sorted by time.
 */
function timelineQuery(ordered: boolean): string {
  const by = (walk: string) => (ordered ? walk : "created_at DESC, seq DESC");
  // Ordered, each branch's newest entry below the key is its top; the page's rows are no older than the limit-th
  // newest top (those branches alone hold enough rows), so only branches reaching it are read a page of.
  const branches = ordered
    ? `(WITH tops AS (SELECT b.id, t.created_at AS top FROM branches b CROSS JOIN LATERAL (SELECT created_at FROM entries
          WHERE branch_id = b.id AND ${below("entry")} ORDER BY position DESC LIMIT 1) t WHERE b.session_id = $2)
        SELECT id FROM tops WHERE top >= coalesce((SELECT top FROM tops ORDER BY top DESC OFFSET $6 - 1 LIMIT 1), '-Infinity'::float8))`
    : `(SELECT id FROM branches WHERE session_id = $2)`;
  return `SELECT * FROM (
    SELECT e.* FROM ${branches} b CROSS JOIN LATERAL (
      SELECT 'entry' AS source, kind, id AS "refId", branch_id AS "branchId", coalesce(role, tool) AS detail, created_at AS "createdAt", seq
      FROM entries WHERE branch_id = b.id AND ${below("entry")} ORDER BY ${by("position DESC")} LIMIT $6) e
    UNION ALL
    (SELECT 'checkpoint', 'checkpoint', id, branch_id, name, created_at, seq FROM checkpoints
      WHERE session_id = $2 AND user_id = $1 AND (expires_at IS NULL OR expires_at > $7::float8) AND ${below("checkpoint")} ORDER BY ${by("seq DESC")} LIMIT $6)
    UNION ALL
    (SELECT 'branch', 'branch', id, id, reason || ' at position ' || fork_position, created_at, seq FROM branches
      WHERE session_id = $2 AND parent_id IS NOT NULL AND ${below("branch")} ORDER BY created_at DESC, seq DESC LIMIT $6)
    UNION ALL
    (SELECT 'event', kind, ref_id, branch_id, detail, created_at, seq FROM events
      WHERE session_id = $2 AND ${below("event")} ORDER BY ${by("seq DESC")} LIMIT $6)) t
  ORDER BY "createdAt" DESC, source COLLATE "C" DESC, seq DESC LIMIT $6`;
}
/**
 * Both walks in one statement, so a page is one round trip: the session's `times_ordered` is a one-time filter
 * (an uncorrelated subquery runs once, before either side), and the side it turns off is never executed.
 */
const ORDERED = `(SELECT times_ordered FROM sessions WHERE id = $2)`;
const TIMELINE = `SELECT * FROM (SELECT * FROM (${timelineQuery(true)}) o WHERE ${ORDERED}
  UNION ALL SELECT * FROM (${timelineQuery(false)}) u WHERE NOT ${ORDERED}) t
  ORDER BY "createdAt" DESC, source COLLATE "C" DESC, seq DESC`;

/** Children before parents: the foreign keys hold at every statement. Each reads by index (tests check the plans). */
export const DELETE_SESSION = [
  `DELETE FROM lg_writes WHERE session_id = $1`,
  `DELETE FROM lg_blobs WHERE session_id = $1`,
  `DELETE FROM lg_checkpoints WHERE session_id = $1`,
  `DELETE FROM lg_threads WHERE session_id = $1`,
  `DELETE FROM checkpoint_files WHERE checkpoint_id IN (SELECT id FROM checkpoints WHERE session_id = $1)`,
  `DELETE FROM checkpoint_metadata WHERE cp_seq IN (SELECT seq FROM checkpoints WHERE session_id = $1)`,
  `DELETE FROM tool_results WHERE entry_id IN (SELECT e.id FROM entries e JOIN branches b ON b.id = e.branch_id WHERE b.session_id = $1)`,
  `DELETE FROM applied WHERE session_id = $1`,
  `DELETE FROM call_paths WHERE session_id = $1`,
  `DELETE FROM replay_results WHERE session_id = $1`,
  `DELETE FROM set_aside WHERE session_id = $1`,
  `DELETE FROM running_calls WHERE session_id = $1`,
  `DELETE FROM imported_calls WHERE session_id = $1`,
  `DELETE FROM move_steps WHERE move_id IN (SELECT id FROM moves WHERE session_id = $1)`,
  `DELETE FROM moves WHERE session_id = $1`,
  `DELETE FROM move_history WHERE session_id = $1`,
  `DELETE FROM events WHERE session_id = $1`,
  `DELETE FROM requests WHERE session_id = $1`,
  `DELETE FROM workspace_stats WHERE session_id = $1`,
  `DELETE FROM workspaces WHERE session_id = $1`,
  `DELETE FROM checkpoint_holds WHERE session_id = $1`,
  `DELETE FROM checkpoints WHERE session_id = $1`,
  `DELETE FROM entries WHERE branch_id IN (SELECT id FROM branches WHERE session_id = $1)`,
  `DELETE FROM branches WHERE session_id = $1`,
  `DELETE FROM sessions WHERE id = $1`,
];

/** The statements of this file, by what they do (the timeline's and the deletion's above). */
const s = {
  insertSession: insertRow("sessions", [
    "id",
    "user_id",
    "title",
    "metadata",
    "current_branch_id",
    "origin_session_id",
    "origin_checkpoint_id",
    "created_at",
    "updated_at",
    "times_ordered",
  ]),
  getSession: `SELECT ${SESSION_COLS} FROM sessions WHERE id = $1`,
  getSessionInfo: `SELECT ${SESSION_INFO_COLS} FROM sessions WHERE id = $1`,
  takenId: `SELECT id FROM (SELECT id, 0 AS k FROM sessions WHERE id = ANY($1::text[])
    UNION ALL SELECT id, 1 FROM branches WHERE id = ANY($2::text[])
    UNION ALL SELECT id, 2 FROM entries WHERE id = ANY($3::text[])
    UNION ALL SELECT id, 3 FROM checkpoints WHERE id = ANY($4::text[])) taken ORDER BY k LIMIT 1`,
  countUserSessions: `SELECT count(*) FROM sessions WHERE user_id = $1`,
  userSessionIds: `SELECT id, seq FROM sessions WHERE user_id = $1 AND seq < $2::bigint ORDER BY seq DESC LIMIT $3`,
  setCurrentBranch: `UPDATE sessions SET current_branch_id = $1, updated_at = $2 WHERE id = $3`,
  setCurrentBranchMoved: `UPDATE sessions SET current_branch_id = $1, updated_at = $2, move_top = $4, move_redo = NULL WHERE id = $3`,
  updateSession: `UPDATE sessions SET title = CASE WHEN $1::boolean THEN $2::text ELSE title END,
    metadata = CASE WHEN $3::boolean THEN $4::text ELSE metadata END, updated_at = $5 WHERE id = $6`,
  markHasTools: `UPDATE sessions SET has_tools = true WHERE id = $1 AND NOT has_tools`,
  allSessionIds: `SELECT id FROM sessions ORDER BY seq`,
  // Never before the session's newest event (another server's clock may be behind): the timeline walks events by seq.
  // INSERT ... SELECT, not VALUES: never merged with another event's insert into one statement, whose rows would all be
  // weighed against the events before that statement.
  insertEvent: insertWith(
    "events",
    (p) => `INSERT INTO events (session_id, kind, ref_id, branch_id, detail, created_at)
    SELECT ${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)},
      GREATEST(${p(6)}::float8, coalesce((SELECT created_at FROM events WHERE session_id = ${p(1)} ORDER BY seq DESC LIMIT 1), 0))`,
  ),
  insertEventAsRecorded: insertWith(
    "events",
    (p) =>
      `INSERT INTO events (session_id, kind, ref_id, branch_id, detail, created_at) SELECT ${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, ${p(5)}, ${p(6)}::float8`,
  ),
  sessionEvents: `SELECT seq, session_id AS "sessionId", kind, ref_id AS "refId", branch_id AS "branchId", detail, created_at AS "createdAt"
    FROM events WHERE session_id = $1 ORDER BY seq`,
  markTimesUnordered: `UPDATE sessions SET times_ordered = false WHERE id = $1`,
  setRetention: `UPDATE sessions SET retention = $1, retention_aged_at = $2 WHERE id = $3`,
  weighCheckpoints: `UPDATE checkpoints SET weighed = true WHERE session_id = $1 AND NOT weighed`,
  allWithRetention: `SELECT id FROM sessions WHERE retention IS NOT NULL ORDER BY seq`,
  withRetention: `SELECT id FROM sessions WHERE id = $1 AND retention IS NOT NULL`,
  insertImportedCall: insertRow("imported_calls", ["entry_id", "session_id"]),
  importedCalls: `SELECT entry_id FROM imported_calls WHERE session_id = $1`,
  // user_id is COLLATE "C": users page in byte order, as on SQLite.
  listUsers: `SELECT user_id AS "userId", count(*) AS sessions, max(${SESSION_UPDATED}) AS "updatedAt"
    FROM sessions WHERE user_id > $1 GROUP BY user_id ORDER BY user_id LIMIT $2`,
};

export function sessionsTx(sql: Sql): SessionsTx {
  return {
    *insertSession(r: NewSession) {
      yield* sql.later(s.insertSession, [
        r.id,
        r.userId,
        r.title,
        r.metadata,
        r.currentBranchId,
        r.originSessionId,
        r.originCheckpointId,
        r.createdAt,
        r.updatedAt,
        true,
      ]);
    },
    *getSession(id: string) {
      return yield* sql.one<SessionRow>(s.getSession, [id]);
    },
    *getSessionInfo(id: string) {
      return yield* sql.one<SessionRow>(s.getSessionInfo, [id]);
    },
    *takenId(ids: { sessions: string[]; branches: string[]; entries: string[]; checkpoints: string[] }) {
      const [id] = yield* sql.column<string>(s.takenId, [ids.sessions, ids.branches, ids.entries, ids.checkpoints]);
      return id;
    },
    *listSessions(userId: string, beforeSeq: number | undefined, limit: number) {
      const rows = yield* sql.rows<ListedTuple>(LIST_SESSIONS, [userId, beforeSeq ?? Number.MAX_SAFE_INTEGER, limit]);
      return rows.map(listedSessionRow);
    },
    *countUserSessions(userId: string) {
      return (yield* sql.column<number>(s.countUserSessions, [userId]))[0]!;
    },
    *userSessionIds(userId: string, beforeSeq: number | undefined, limit: number) {
      return yield* sql.rows<{ id: string; seq: number }>(s.userSessionIds, [userId, beforeSeq ?? Number.MAX_SAFE_INTEGER, limit]);
    },
    *setCurrentBranch(sessionId: string, branchId: string, at: number, top?: string, keepUndone = false) {
      if (top === undefined) {
        yield* sql.later(s.setCurrentBranch, [branchId, at, sessionId]);
        return;
      }
      if (!keepUndone) yield* sql.later(FORGET_UNDONE, [sessionId]);
      yield* sql.later(s.setCurrentBranchMoved, [branchId, at, sessionId, top]);
    },
    *updateSession(sessionId: string, fields: { title?: string | null; metadata?: string | null }, at: number) {
      const { title, metadata } = fields;
      yield* sql.exec(s.updateSession, [title !== undefined, title ?? null, metadata !== undefined, metadata ?? null, at, sessionId]);
    },
    *markHasTools(sessionId: string) {
      yield* sql.later(s.markHasTools, [sessionId]);
    },
    *allSessionIds() {
      return yield* sql.column<string>(s.allSessionIds);
    },
    *deleteSession(sessionId: string) {
      for (const statement of DELETE_SESSION) yield* sql.later(statement, [sessionId]);
    },
    *insertEvent(r: Omit<EventRow, "seq">, how?: { asRecorded?: boolean }) {
      yield* sql.later(how?.asRecorded ? s.insertEventAsRecorded : s.insertEvent, [
        r.sessionId,
        r.kind,
        r.refId,
        r.branchId,
        r.detail,
        r.createdAt,
      ]);
    },
    *sessionEvents(sessionId: string) {
      return yield* sql.rows<EventRow>(s.sessionEvents, [sessionId]);
    },
    *timeline(userId: string, sessionId: string, before: TimelineKey | undefined, limit: number, now: number) {
      return yield* sql.rows<TimelineRow>(TIMELINE, [
        userId,
        sessionId,
        before?.createdAt ?? Number.MAX_SAFE_INTEGER,
        before?.source ?? "~",
        before?.seq ?? Number.MAX_SAFE_INTEGER,
        limit,
        now,
      ]);
    },
    *markTimesUnordered(sessionId: string) {
      yield* sql.later(s.markTimesUnordered, [sessionId]);
    },
    *setRetention(sessionId: string, retention: string | null, agedAt: number) {
      yield* sql.later(s.setRetention, [retention, agedAt, sessionId]);
      // A policy set: the session's checkpoints join retention's time index (checkpoints.weighed).
      if (retention !== null) yield* sql.later(s.weighCheckpoints, [sessionId]);
    },
    *sessionsWithRetention(sessionId?: string) {
      return sessionId === undefined
        ? yield* sql.column<string>(s.allWithRetention)
        : yield* sql.column<string>(s.withRetention, [sessionId]);
    },
    *insertImportedCall(entryId: string, sessionId: string) {
      yield* sql.later(s.insertImportedCall, [entryId, sessionId]);
    },
    *importedCalls(sessionId: string) {
      return new Set(yield* sql.column<string>(s.importedCalls, [sessionId]));
    },
    *listAllSessions(beforeSeq: number | undefined, limit: number) {
      const rows = yield* sql.rows<ListedTuple>(LIST_ALL_SESSIONS, [beforeSeq ?? Number.MAX_SAFE_INTEGER, limit]);
      return rows.map(listedSessionRow);
    },
    *listUsers(afterUserId: string | undefined, limit: number) {
      return yield* sql.rows<UserRow>(s.listUsers, [afterUserId ?? "", limit]);
    },
  };
}
