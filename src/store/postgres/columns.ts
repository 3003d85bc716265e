// Column lists and row mappers shared by the PostgreSQL statements of every area (aliases quoted: PostgreSQL folds case).
import type { HeadRow } from "../port/index.js";
import { columnsBuilder } from "../tuple-rows.js";

export const SESSION_BASE_COLS = `seq, id, user_id AS "userId", title, metadata, current_branch_id AS "currentBranchId",
  origin_session_id AS "originSessionId", origin_checkpoint_id AS "originCheckpointId", has_tools AS "hasTools",
  has_workspace AS "hasWorkspace", retention, retention_aged_at AS "retentionAgedAt", created_at AS "createdAt"`;
/** For the hot path (ownership checks): `updatedAt` as stored, the time of the last move. */
export const SESSION_COLS = `${SESSION_BASE_COLS}, updated_at AS "updatedAt"`;
/** The later of the last move and the last entry of the current branch, as users see it. */
export const SESSION_UPDATED = `GREATEST(updated_at,
  coalesce((SELECT created_at FROM entries WHERE branch_id = current_branch_id ORDER BY position DESC LIMIT 1), 0))`;
export const SESSION_INFO_COLS = `${SESSION_BASE_COLS}, ${SESSION_UPDATED} AS "updatedAt"`;

/** Columns with the key each has in a row object; `$` stands for the table's alias. */
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
  ["encode($.hash, 'hex')", "hash"],
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
  ["encode($.hash, 'hex')", "hash"],
  ["$.state_id", "stateId"],
  ["$.msg_count", "msgCount"],
  ["$.created_at", "createdAt"],
];
/** What a checkpoint listing reads: every field but the state and head hash. */
const LISTED_FIELDS = CHECKPOINT_FIELDS.filter(([, key]) => key !== "stateId" && key !== "headHash");

/** `$.col` as `alias.col`, or as `col` when the alias is "" (one table, no alias). */
export const qualify = (column: string, alias: string) => (alias ? column.replaceAll("$", alias) : column.replaceAll("$.", ""));
export const select = (alias: string, cols: Columns) => cols.map(([c]) => qualify(c, alias)).join(", ");
export const named = (alias: string, cols: Columns) => cols.map(([c, key]) => `${qualify(c, alias)} AS "${key}"`).join(", ");

/** The object of `cols` from `tuple[at…]`; undefined when its first column is null (a LEFT JOIN that found nothing). */
export function slice<T>(tuple: unknown[], at: number, cols: Columns): T | undefined {
  if (tuple[at] === null) return undefined;
  return columnsBuilder(cols)(tuple, at) as T;
}

export const headFromTuple = (t: unknown[], at: number): HeadRow => slice<HeadRow>(t, at, HEAD_FIELDS)!;

export const BRANCH_COLS = named("", BRANCH_FIELDS);
export const ENTRY_COLS = named("e", ENTRY_FIELDS);
export const HEAD_COLS = select("e", HEAD_FIELDS);
export const TOOL_COLS = `${ENTRY_COLS}, e.reversible, r.status, r.result, r.error, r.hash AS "resultHash", r.completed_at AS "completedAt",
  a.result AS "appliedResult", a.applied_seq AS "appliedSeq"`;
export const TOOL_JOIN = `entries e LEFT JOIN tool_results r ON r.entry_id = e.id LEFT JOIN applied a ON a.entry_id = e.id`;
export const CHECKPOINT_COLS = named("", CHECKPOINT_FIELDS);
export const LISTED_COLS = named("", LISTED_FIELDS);
/**
 * The database server's clock (ms since the epoch, µs fractions) as the statement runs: leases are set and judged by it,
 * so app servers whose clocks disagree still agree on whose lease holds.
 */
export const DB_NOW_MS = `(extract(epoch from clock_timestamp()) * 1000)::float8`;
export const MOVE_COLS = `id, session_id AS "sessionId", kind, spec, status, pid, pid_start AS "pidStart",
  lease_until > ${DB_NOW_MS} AS "leaseHeld", created_at AS "createdAt", finished_at AS "finishedAt"`;
export const WORKSPACE_COLS = `session_id AS "sessionId", dir, exclude, manifest_id AS "manifestId", restoring, updated_at AS "updatedAt", host, gitignore`;
export const HISTORY_COLS = `'m:' || seq AS ref, session_id AS "sessionId", kind, from_branch_id AS "fromBranchId",
  from_position AS "fromPosition", to_branch_id AS "toBranchId", to_position AS "toPosition", prev, created_at AS "createdAt"`;
/** A move recorded on the branch it made, as a `MoveHistoryRow`. */
export const BRANCH_MOVE_COLS = `id AS ref, session_id AS "sessionId", move_kind AS kind, move_from_branch_id AS "fromBranchId",
  move_from_position AS "fromPosition", coalesce(move_to_branch_id, id) AS "toBranchId", move_to_position AS "toPosition", move_prev AS prev, created_at AS "createdAt"`;
export const STEP_COLS = `move_id AS "moveId", idx, op, entry_id AS "entryId", status, result, error`;

/** The forkpoint checkpoint a running move will fork its new branch at (its spec's `newBranch.forkCheckpointId`). */
export const MOVE_FORK_CHECKPOINT = `(spec::jsonb #>> '{newBranch,forkCheckpointId}')`;

/**
 * Checkpoints expired at $1 (of $2 when `ofSession`) that no branch forks from, no running move goes to, no hold keeps
 * and no LangGraph thread reads (its checkpoints, its start).
 */
export const expiredUnused = (ofSession: boolean) => `expires_at IS NOT NULL AND expires_at <= $1::float8
  ${ofSession ? "AND session_id = $2" : ""}
  AND NOT EXISTS (SELECT 1 FROM branches b WHERE b.fork_checkpoint_id = checkpoints.id)
  AND NOT EXISTS (SELECT 1 FROM moves m WHERE m.status = 'running' AND ${MOVE_FORK_CHECKPOINT.replace("spec", "m.spec")} = checkpoints.id)
  AND NOT EXISTS (SELECT 1 FROM checkpoint_holds h WHERE h.checkpoint_id = checkpoints.id AND h.until > ${DB_NOW_MS})
  AND NOT EXISTS (SELECT 1 FROM lg_checkpoints c WHERE c.fp_checkpoint_id = checkpoints.id)
  AND NOT EXISTS (SELECT 1 FROM lg_threads t WHERE t.session_id = checkpoints.session_id AND t.start_checkpoint_id = checkpoints.id)`;

/** Deletes the rows of the moves a new move leaves nothing to redo of (moves recorded on branches stay with them). */
export const FORGET_UNDONE = `DELETE FROM move_history WHERE seq IN (SELECT substr(v, 3)::bigint
  FROM sessions s CROSS JOIN LATERAL jsonb_array_elements_text(coalesce(s.move_redo, '[]')::jsonb) v WHERE s.id = $1 AND v LIKE 'm:%')`;
