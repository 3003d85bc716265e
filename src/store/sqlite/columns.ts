// Column lists and row mappers shared by the SQLite statements of every area: rows are built from tuples.
import type { EntryRow, HeadRow, ListedCheckpoint, SessionRow, ToolRow } from "../port/index.js";
import { columnsBuilder } from "../tuple-rows.js";

export const SESSION_BASE_COLS = `seq, id, user_id AS userId, title, metadata, current_branch_id AS currentBranchId,
  origin_session_id AS originSessionId, origin_checkpoint_id AS originCheckpointId, has_tools AS hasTools, has_workspace AS hasWorkspace, retention, retention_aged_at AS retentionAgedAt, created_at AS createdAt`;
/** For the hot path (ownership checks): `updatedAt` as stored, the time of the last move. */
export const SESSION_COLS = `${SESSION_BASE_COLS}, updated_at AS updatedAt`;
/** For what users see: the later of the last move and the last entry of the current branch (appends do not rewrite the session row). */
export const SESSION_INFO_COLS = `${SESSION_BASE_COLS},
  max(updated_at, coalesce((SELECT created_at FROM entries WHERE branch_id = current_branch_id ORDER BY position DESC LIMIT 1), 0)) AS updatedAt`;

/**
 * The columns of the tables read most, each with the key it has in a row object. `$` stands for the table's alias:
 * `named` gives the columns as a row object's (one table), `select` as a raw tuple's (joins whose tables share
 * column names read one tuple, each table's slice copied into its own object by `slice`).
 */
export type Columns = readonly (readonly [sql: string, key: string])[];
export const ENTRY_FIELDS: Columns = [
  ["$.seq", "seq"],
  ["$.id", "id"],
  ["$.branch_id", "branchId"],
  ["$.position", "position"],
  ["$.kind", "kind"],
  ["$.role", "role"],
  ["$.content", "content"],
  ["$.tool", "tool"],
  ["$.call_id", "callId"],
  ["$.client_id", "clientId"],
  ["$.metadata", "metadata"],
  ["$.state_id", "stateId"],
  ["$.msg_count", "msgCount"],
  ["lower(hex($.hash))", "hash"],
  ["$.created_at", "createdAt"],
];
export const BRANCH_FIELDS: Columns = [
  ["$.id", "id"],
  ["$.session_id", "sessionId"],
  ["$.parent_id", "parentId"],
  ["$.fork_checkpoint_id", "forkCheckpointId"],
  ["$.fork_position", "forkPosition"],
  ["$.fork_entry_id", "forkEntryId"],
  ["$.name", "name"],
  ["$.reason", "reason"],
  ["$.created_at", "createdAt"],
];
export const CHECKPOINT_FIELDS: Columns = [
  ["$.seq", "seq"],
  ["$.id", "id"],
  ["$.session_id", "sessionId"],
  ["$.branch_id", "branchId"],
  ["$.position", "position"],
  ["$.name", "name"],
  ["$.auto", "auto"],
  ["$.metadata", "metadata"],
  ["$.user_id", "userId"],
  ["$.state_id", "stateId"],
  ["$.head_hash", "headHash"],
  ["$.checksum", "checksum"],
  ["$.created_at", "createdAt"],
  ["$.expires_at", "expiresAt"],
];
export const HEAD_FIELDS: Columns = [
  ["$.id", "id"],
  ["$.position", "position"],
  ["lower(hex($.hash))", "hash"],
  ["$.state_id", "stateId"],
  ["$.msg_count", "msgCount"],
  ["$.created_at", "createdAt"],
];
/** `$.col` as `alias.col`, or as `col` when the alias is "" (one table, no alias). */
export const qualify = (column: string, alias: string) => (alias ? column.replaceAll("$", alias) : column.replaceAll("$.", ""));
export const select = (alias: string, cols: Columns) => cols.map(([c]) => qualify(c, alias)).join(", ");
export const named = (alias: string, cols: Columns) => cols.map(([c, key]) => `${qualify(c, alias)} AS ${key}`).join(", ");
/** A session row as read, its flags (0 or 1 in SQLite) made booleans in place, as the port's `SessionRow` has them. */
export function sessionRow(row: unknown): SessionRow | undefined {
  const r = row as { hasTools: unknown; hasWorkspace: unknown } | undefined;
  if (r) {
    r.hasTools = r.hasTools === 1;
    r.hasWorkspace = r.hasWorkspace === 1;
  }
  return r as SessionRow | undefined;
}

/** Tool rows as read, their `reversible` (0, 1 or null in SQLite) made a boolean in place. */
export function toolRows(rows: unknown[]): ToolRow[] {
  for (const row of rows as { reversible: unknown }[]) if (row.reversible !== null) row.reversible = row.reversible === 1;
  return rows as ToolRow[];
}

/**
 * The time of a session's newest checkpoint (0: none), given SQL for its user and id. Through the session's own index:
 * left to choose, SQLite takes the covering per-user listing index and walks back through every newer checkpoint of the
 * user's other sessions (246 µs a read with 2,000 sessions, against 5.5 µs).
 */
/** Whether session `s` has a move journaled and unfinished: only one with tools or a workspace can (see `moves_running`). */
export const MOVING = `CASE WHEN s.has_tools OR s.has_workspace THEN EXISTS (SELECT 1 FROM moves m WHERE m.session_id = s.id AND m.status = 'running') ELSE 0 END`;
export const LAST_CHECKPOINT_AT = (userId: string, sessionId: string) =>
  `coalesce((SELECT created_at FROM checkpoints INDEXED BY checkpoints_session_user_seq
  WHERE user_id = ${userId} AND session_id = ${sessionId} ORDER BY seq DESC LIMIT 1), 0)`;

/** The object of `cols` from `tuple[at…]`; undefined when its first column is null (a LEFT JOIN that found nothing). */
export function slice<T>(tuple: unknown[], at: number, cols: Columns): T | undefined {
  if (tuple[at] === null) return undefined;
  return columnsBuilder(cols)(tuple, at) as T;
}

export const BRANCH_COLS = named("", BRANCH_FIELDS);
export const ENTRY_COLS = named("e", ENTRY_FIELDS);
export const TOOL_COLS = `${ENTRY_COLS}, e.reversible, r.status, r.result, r.error, r.hash AS resultHash, r.completed_at AS completedAt,
  a.result AS appliedResult, a.applied_seq AS appliedSeq`;
export const TOOL_JOIN = `entries e LEFT JOIN tool_results r ON r.entry_id = e.id LEFT JOIN applied a ON a.entry_id = e.id`;
export const CHECKPOINT_COLS = named("", CHECKPOINT_FIELDS);
export const MOVE_COLS = `id, session_id AS sessionId, kind, spec, status, pid, pid_start AS pidStart, NULL AS leaseHeld, created_at AS createdAt, finished_at AS finishedAt`;
export const WORKSPACE_COLS = `session_id AS sessionId, dir, exclude, manifest_id AS manifestId, restoring, updated_at AS updatedAt, host, gitignore`;
export const HISTORY_COLS = `'m:' || seq AS ref, session_id AS sessionId, kind, from_branch_id AS fromBranchId, from_position AS fromPosition,
  to_branch_id AS toBranchId, to_position AS toPosition, prev, created_at AS createdAt`;
/** A move recorded on the branch it made, as a `MoveHistoryRow`. */
export const BRANCH_MOVE_COLS = `id AS ref, session_id AS sessionId, move_kind AS kind, move_from_branch_id AS fromBranchId,
  move_from_position AS fromPosition, coalesce(move_to_branch_id, id) AS toBranchId, move_to_position AS toPosition, move_prev AS prev, created_at AS createdAt`;
export const STEP_COLS = `move_id AS moveId, idx, op, entry_id AS entryId, status, result, error`;

export type EntryTuple = [
  number,
  string,
  number,
  EntryRow["kind"],
  string | null,
  string | null,
  string | null,
  string | null,
  string | null,
  string | null,
  number | null,
  number,
  string,
  number,
];
/** The columns of the covering index `checkpoints_user_listing`, so a listing never reads the table. */
export const LISTED_TUPLE = `seq, id, session_id, branch_id, position, name, auto, metadata, user_id, checksum, created_at, expires_at`;
export type ListedTuple = [
  number,
  string,
  string,
  string,
  number,
  string | null,
  number,
  string | null,
  string,
  string,
  number,
  number | null,
];
export const listedFromTuple = (t: ListedTuple): ListedCheckpoint => ({
  seq: t[0],
  id: t[1],
  sessionId: t[2],
  branchId: t[3],
  position: t[4],
  name: t[5],
  auto: t[6] === 1,
  metadata: t[7],
  userId: t[8],
  checksum: t[9],
  createdAt: t[10],
  expiresAt: t[11],
});

// Hashes cross as hex text both ways (hex() / unhex() in SQL): no Buffer per row on the hot path.
export const HEAD_COLS = select("e", HEAD_FIELDS);
export type HeadTuple = [string, number, string, number | null, number, number];
export type CurrentTuple = [
  number,
  string,
  string,
  string | null,
  string | null,
  string,
  string | null,
  string | null,
  number,
  number,
  number,
  string,
  string | null,
  string | null,
  number,
  string | null,
  string | null,
  string,
  number,
  string | null,
  number,
  string,
  number | null,
  number,
  number,
  number,
  string | null,
  number,
  number,
  number,
];
export const headFromTuple = (t: HeadTuple | CurrentTuple, at: number): HeadRow => ({
  id: t[at] as string,
  position: t[at + 1] as number,
  hash: t[at + 2] as string,
  stateId: t[at + 3] as number | null,
  msgCount: t[at + 4] as number,
  createdAt: t[at + 5] as number,
});

/** Now, in ms, by the database's clock (the system's): what a checkpoint's hold lasts until is compared with. */
export const DB_NOW_MS = `(unixepoch('subsec') * 1000)`;

/**
 * Checkpoints expired at @now (of @sessionId, or all) that no branch forks from, no running rollback goes to, no
 * hold keeps and no LangGraph thread reads (its checkpoints, its start).
 */
export const EXPIRED_UNUSED = `expires_at IS NOT NULL AND expires_at <= @now AND (@sessionId IS NULL OR session_id = @sessionId)
  AND NOT EXISTS (SELECT 1 FROM branches b WHERE b.fork_checkpoint_id = checkpoints.id)
  AND NOT EXISTS (SELECT 1 FROM moves m WHERE m.status = 'running' AND json_extract(m.spec, '$.newBranch.forkCheckpointId') = checkpoints.id)
  AND NOT EXISTS (SELECT 1 FROM checkpoint_holds h WHERE h.checkpoint_id = checkpoints.id AND h.until > ${DB_NOW_MS})
  AND NOT EXISTS (SELECT 1 FROM lg_checkpoints c WHERE c.fp_checkpoint_id = checkpoints.id)
  AND NOT EXISTS (SELECT 1 FROM lg_threads t WHERE t.session_id = checkpoints.session_id AND t.start_checkpoint_id = checkpoints.id)`;

/**
 * Deletes the rows of the moves a new move leaves nothing to redo of (a session's `move_redo`, a JSON list; moves
 * recorded on branches stay with them). Run only when there are some: the statement costs more than reading the list.
 */
export const FORGET_UNDONE = `DELETE FROM move_history WHERE seq IN (SELECT CAST(substr(value, 3) AS INTEGER) FROM json_each(?) WHERE value LIKE 'm:%')`;
