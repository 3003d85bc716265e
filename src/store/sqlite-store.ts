// The SQLite implementation of `Store`: prepared statements over better-sqlite3, one connection per process.
// Over 450 lines as one class holding every area's statements; the store-port issue (17) splits it by area.
import type Database from "better-sqlite3";
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { DatabaseError } from "../models/errors.js";
import { prepare, type RowMode, type Statement } from "./object-rows.js";
import { openDatabase, type OpenDatabaseOptions } from "./open-database.js";
import { WalCheckpointer } from "./wal-checkpointer.js";
import { LangGraphTables } from "./langgraph-tables.js";
import { hasWalFiles, releaseWalFiles } from "./wal-files.js";
import type {
  BranchRow,
  CheckpointAnchorRow,
  CheckpointFilter,
  EntryBaseRow,
  MessageRow,
  CheckpointRow,
  EntryRow,
  EventRow,
  LineageSegment,
  MoveRow,
  MoveStepRow,
  MoveStepStatus,
  NewCheckpoint,
  ListedCheckpoint,
  HeadRow,
  CurrentRow,
  WorkspaceRow,
  CheckpointFilesRow,
  NewEntry,
  SessionRow,
  Store,
  TimelineRow,
  ToolResultRow,
  ToolRow,
  UserRow,
} from "./store.js";

const SESSION_BASE_COLS = `seq, id, user_id AS userId, title, metadata, current_branch_id AS currentBranchId,
  origin_session_id AS originSessionId, origin_checkpoint_id AS originCheckpointId, has_tools AS hasTools, has_workspace AS hasWorkspace, created_at AS createdAt`;
/** For the hot path (ownership checks): `updatedAt` as stored, the time of the last move. */
const SESSION_COLS = `${SESSION_BASE_COLS}, updated_at AS updatedAt`;
/** For what users see: the later of the last move and the last entry of the current branch (appends do not rewrite the session row). */
const SESSION_INFO_COLS = `${SESSION_BASE_COLS},
  max(updated_at, coalesce((SELECT created_at FROM entries WHERE branch_id = current_branch_id ORDER BY position DESC LIMIT 1), 0)) AS updatedAt`;

/**
 * The columns of the tables read most, each with the key it has in a row object. `$` stands for the table's alias:
 * `named` gives the columns as a row object's (one table), `select` as a raw tuple's (joins whose tables share
 * column names read one tuple, each table's slice copied into its own object by `slice`).
 */
type Columns = readonly (readonly [sql: string, key: string])[];
const ENTRY_FIELDS: Columns = [
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
const BRANCH_FIELDS: Columns = [
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
const CHECKPOINT_FIELDS: Columns = [
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
const HEAD_FIELDS: Columns = [
  ["$.id", "id"],
  ["$.position", "position"],
  ["lower(hex($.hash))", "hash"],
  ["$.state_id", "stateId"],
  ["$.msg_count", "msgCount"],
];
/** `$.col` as `alias.col`, or as `col` when the alias is "" (one table, no alias). */
const qualify = (column: string, alias: string) => (alias ? column.replaceAll("$", alias) : column.replaceAll("$.", ""));
const select = (alias: string, cols: Columns) => cols.map(([c]) => qualify(c, alias)).join(", ");
const named = (alias: string, cols: Columns) => cols.map(([c, key]) => `${qualify(c, alias)} AS ${key}`).join(", ");
/** Tool rows as read, their `reversible` (0, 1 or null in SQLite) made a boolean in place. */
function toolRows(rows: unknown[]): ToolRow[] {
  for (const row of rows as { reversible: unknown }[]) if (row.reversible !== null) row.reversible = row.reversible === 1;
  return rows as ToolRow[];
}

/** The object of `cols` from `tuple[at…]`; undefined when its first column is null (a LEFT JOIN that found nothing). */
function slice<T>(tuple: unknown[], at: number, cols: Columns): T | undefined {
  if (tuple[at] === null) return undefined;
  const row: Record<string, unknown> = {};
  for (let i = 0; i < cols.length; i++) row[cols[i]![1]] = tuple[at + i];
  return row as T;
}

const BRANCH_COLS = named("", BRANCH_FIELDS);
const ENTRY_COLS = named("e", ENTRY_FIELDS);
const TOOL_COLS = `${ENTRY_COLS}, e.reversible, r.status, r.result, r.error, r.hash AS resultHash, r.completed_at AS completedAt,
  a.result AS appliedResult, a.applied_seq AS appliedSeq`;
const TOOL_JOIN = `entries e LEFT JOIN tool_results r ON r.entry_id = e.id LEFT JOIN applied a ON a.entry_id = e.id`;
const CHECKPOINT_COLS = named("", CHECKPOINT_FIELDS);
const MOVE_COLS = `id, session_id AS sessionId, kind, spec, status, pid, pid_start AS pidStart, created_at AS createdAt, finished_at AS finishedAt`;
const WORKSPACE_COLS = `session_id AS sessionId, dir, exclude, manifest_id AS manifestId, restoring, updated_at AS updatedAt`;
const STEP_COLS = `move_id AS moveId, idx, op, entry_id AS entryId, status, result, error`;

type EntryTuple = [
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
type MessageTuple = [string, number, string, string, string | null, string | null, number];
/** The columns of the covering index `checkpoints_user_listing`, so a listing never reads the table. */
const LISTED_TUPLE = `seq, id, session_id, branch_id, position, name, auto, metadata, user_id, checksum, created_at, expires_at`;
type ListedTuple = [number, string, string, string, number, string | null, number, string | null, string, string, number, number | null];
const listedFromTuple = (t: ListedTuple): ListedCheckpoint => ({
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
const HEAD_COLS = select("e", HEAD_FIELDS);
type HeadTuple = [string, number, string, number | null, number];
type CurrentTuple = [
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
];
const headFromTuple = (t: HeadTuple | CurrentTuple, at: number): HeadRow => ({
  id: t[at] as string,
  position: t[at + 1] as number,
  hash: t[at + 2] as string,
  stateId: t[at + 3] as number | null,
  msgCount: t[at + 4] as number,
});

/** Checkpoints expired at @now (of @sessionId, or all) that no branch forks from and no running rollback goes to. */
const EXPIRED_UNUSED = `expires_at IS NOT NULL AND expires_at <= @now AND (@sessionId IS NULL OR session_id = @sessionId)
  AND NOT EXISTS (SELECT 1 FROM branches b WHERE b.fork_checkpoint_id = checkpoints.id)
  AND NOT EXISTS (SELECT 1 FROM moves m WHERE m.status = 'running' AND json_extract(m.spec, '$.newBranch.forkCheckpointId') = checkpoints.id)`;

/** Translates driver errors into the typed errors of the API. */
function translate(error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== "string" || !code.startsWith("SQLITE_")) return error;
  if (code.startsWith("SQLITE_READONLY"))
    return new DatabaseError("READ_ONLY", "the database is read-only: writes are refused", { cause: error });
  if (code.startsWith("SQLITE_BUSY"))
    return new DatabaseError("BUSY", "the database stayed locked by another writer past the busy timeout", { cause: error });
  if (code === "SQLITE_CORRUPT" || code === "SQLITE_NOTADB")
    return new DatabaseError("CORRUPT", `the database file is damaged: ${(error as Error).message}`, { cause: error });
  return error;
}

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * Folds the WAL into the file and empties it. A checkpoint already running (the `walWorker`'s) makes TRUNCATE give
 * up at once rather than wait, so it is retried for up to a second: the worker's checkpoints take milliseconds.
 * A reader in another process makes each attempt wait the busy timeout first, so the bound is time, not attempts.
 */
function truncateWal(db: Database.Database): void {
  const deadline = Date.now() + 1_000;
  for (;;) {
    const [result] = db.pragma("wal_checkpoint(TRUNCATE)") as { busy: number }[];
    if (!result?.busy || Date.now() >= deadline) return;
    Atomics.wait(pause, 0, 0, 5);
  }
}

export class SqliteStore implements Store {
  readonly db: Database.Database;
  #closed = false;
  #closing: Promise<void> | undefined;
  #s: Record<string, Statement>;
  /** Checkpoints the WAL on a worker thread when asked to (`walWorker`); never for read-only and in-memory databases. */
  readonly checkpointer: WalCheckpointer | undefined;
  readonly langgraph: LangGraphTables;

  /** A read-only open of a database at rest (no -wal or -shm beside it): its close gives those files back. */
  readonly #releaseWalFiles: (() => void) | undefined;

  constructor(options: OpenDatabaseOptions) {
    const atRest = options.readonly && options.path !== ":memory:" && !hasWalFiles(options.path);
    this.db = openDatabase(options);
    if (atRest) this.#releaseWalFiles = () => releaseWalFiles(options.path);
    if (options.walWorker && !options.readonly && options.path !== ":memory:") {
      this.checkpointer = new WalCheckpointer(this.db, { everyWrites: 32, startAfterWrites: 256, onFailure: options.onWarning });
    }
    this.langgraph = new LangGraphTables(this.db);
    const p = (sql: string, mode?: RowMode) => prepare(this.db, sql, mode);
    this.#s = {
      begin: p("BEGIN IMMEDIATE"),
      beginRead: p("BEGIN"),
      commit: p("COMMIT"),
      rollback: p("ROLLBACK"),
      insertSession:
        p(`INSERT INTO sessions (id, user_id, title, metadata, current_branch_id, origin_session_id, origin_checkpoint_id, created_at, updated_at)
        VALUES (@id, @userId, @title, @metadata, @currentBranchId, @originSessionId, @originCheckpointId, @createdAt, @updatedAt)`),
      getSession: p(`SELECT ${SESSION_COLS} FROM sessions WHERE id = ?`),
      getSessionInfo: p(`SELECT ${SESSION_INFO_COLS} FROM sessions WHERE id = ?`),
      listSessions: p(`SELECT ${SESSION_INFO_COLS} FROM sessions WHERE user_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`),
      markHasTools: p(`UPDATE sessions SET has_tools = 1 WHERE id = ? AND has_tools = 0`),
      markHasWorkspace: p(`UPDATE sessions SET has_workspace = 1 WHERE id = ? AND has_workspace = 0`),
      getWorkspace: p(`SELECT ${WORKSPACE_COLS} FROM workspaces WHERE session_id = ?`),
      restoringWorkspaces: p(`SELECT ${WORKSPACE_COLS} FROM workspaces WHERE restoring IS NOT NULL`),
      putWorkspace:
        p(`INSERT INTO workspaces (session_id, dir, exclude, manifest_id, updated_at) VALUES (@sessionId, @dir, @exclude, @manifestId, @updatedAt)
        ON CONFLICT (session_id) DO UPDATE SET dir = excluded.dir, exclude = excluded.exclude, manifest_id = excluded.manifest_id,
          restoring = NULL, updated_at = excluded.updated_at`),
      setWorkspaceManifest: p(`UPDATE workspaces SET manifest_id = ?, updated_at = ? WHERE session_id = ?`),
      setWorkspaceRestoring: p(`UPDATE workspaces SET restoring = ? WHERE session_id = ?`),
      claimWorkspaceRestore: p(`UPDATE workspaces SET restoring = ? WHERE session_id = ? AND restoring = ?`),
      insertBlob: p(`INSERT INTO file_blobs (hash, content) VALUES (?, ?) ON CONFLICT (hash) DO NOTHING`),
      getBlob: p(`SELECT content FROM file_blobs WHERE hash = ?`, "pluck"),
      manifestId: p(`SELECT id FROM file_manifests WHERE hash = ?`, "pluck"),
      insertManifest: p(`INSERT INTO file_manifests (hash, body) VALUES (?, ?)`),
      getManifest: p(`SELECT hash, body FROM file_manifests WHERE id = ?`),
      insertCheckpointFiles: p(
        `INSERT INTO checkpoint_files (checkpoint_id, manifest_id, dir, exclude) VALUES (@checkpointId, @manifestId, @dir, @exclude)`,
      ),
      checkpointManifest: p(`SELECT manifest_id AS manifestId, dir, exclude FROM checkpoint_files WHERE checkpoint_id = ?`),
      deleteCheckpointFiles: p(`DELETE FROM checkpoint_files WHERE checkpoint_id = ?`),
      deleteUnreferencedManifests: p(`DELETE FROM file_manifests WHERE id NOT IN (SELECT manifest_id FROM checkpoint_files)
        AND id NOT IN (SELECT manifest_id FROM workspaces)
        AND id NOT IN (SELECT json_extract(restoring, '$.manifestId') FROM workspaces WHERE restoring IS NOT NULL)`),
      deleteUnreferencedBlobs: p(`DELETE FROM file_blobs WHERE hash NOT IN (SELECT j.value FROM file_manifests m, json_each(m.body) j)`),
      lastCheckpointFiles:
        p(`SELECT f.manifest_id AS manifestId, f.dir, f.exclude FROM checkpoints c JOIN checkpoint_files f ON f.checkpoint_id = c.id
        WHERE c.branch_id = ? AND c.position >= ? AND c.position <= ? ORDER BY c.position DESC, c.seq DESC LIMIT 1`),
      setCurrent: p(`UPDATE sessions SET current_branch_id = ?, updated_at = ? WHERE id = ?`),
      // The hot inserts bind by position: a third faster than binding by name from an object.
      insertBranch:
        p(`INSERT INTO branches (id, session_id, parent_id, fork_checkpoint_id, fork_position, fork_entry_id, name, reason, created_at)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      getBranch: p(`SELECT ${BRANCH_COLS} FROM branches WHERE id = ?`),
      listBranches: p(`SELECT ${BRANCH_COLS} FROM branches WHERE session_id = ? ORDER BY seq`),
      forkedAt: p(`SELECT ${BRANCH_COLS} FROM branches WHERE session_id = ? AND fork_entry_id = ? ORDER BY seq`),
      forkedAtZero: p(`SELECT ${BRANCH_COLS} FROM branches WHERE session_id = ? AND fork_position = 0 ORDER BY seq`),
      countForkedFrom: p(`SELECT count(*) AS n FROM branches WHERE fork_checkpoint_id = ?`),
      insertEntry:
        p(`INSERT INTO entries (id, branch_id, position, kind, role, content, tool, call_id, client_id, metadata, state_id, msg_count, hash, created_at, reversible)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, unhex(?), ?, ?)`),
      getEntry: p(`SELECT ${ENTRY_COLS} FROM entries e WHERE e.id = ?`),
      entryWithBase: p(
        `SELECT ${select("e", ENTRY_FIELDS)}, ${select("b", BRANCH_FIELDS)}, ${select("f", HEAD_FIELDS)}
        FROM entries e JOIN branches b ON b.id = e.branch_id
        LEFT JOIN entries f ON e.position - 1 > b.fork_position AND f.branch_id = e.branch_id AND f.position = e.position - 1
        WHERE e.id = ?`,
        "raw",
      ),
      lastOwn: p(`SELECT ${HEAD_COLS} FROM entries e WHERE e.branch_id = ? ORDER BY e.position DESC LIMIT 1`, "raw"),
      currentOf: p(
        `SELECT s.seq, s.id, s.user_id, s.title, s.metadata, s.current_branch_id, s.origin_session_id, s.origin_checkpoint_id,
          s.has_tools, s.created_at, s.updated_at,
          b.session_id, b.parent_id, b.fork_checkpoint_id, b.fork_position, b.fork_entry_id, b.name, b.reason, b.created_at,
          ${HEAD_COLS}, s.has_workspace
        FROM sessions s JOIN branches b ON b.id = s.current_branch_id
        LEFT JOIN entries e ON e.branch_id = b.id AND e.position = (SELECT max(position) FROM entries WHERE branch_id = b.id)
        WHERE s.id = ?`,
        "raw",
      ),
      ownAt: p(`SELECT ${ENTRY_COLS} FROM entries e WHERE e.branch_id = ? AND e.position = ?`),
      lineage: p(`WITH RECURSIVE lin(id, parent_id, fork_position, up_to, depth) AS (
          SELECT id, parent_id, fork_position, ?, 0 FROM branches WHERE id = ?
          UNION ALL
          SELECT b.id, b.parent_id, b.fork_position, MIN(lin.up_to, lin.fork_position), lin.depth + 1
          FROM branches b JOIN lin ON b.id = lin.parent_id)
        SELECT id AS branchId, fork_position AS after, up_to AS upTo FROM lin ORDER BY depth DESC`),
      // Raw rows without the branch (the segment's): the longest reads (restore, verify, export) build one object each.
      segment: p(
        `SELECT e.seq, e.id, e.position, e.kind, e.role, e.content, e.tool, e.call_id, e.client_id, e.metadata, e.state_id,
        e.msg_count, lower(hex(e.hash)), e.created_at FROM entries e WHERE e.branch_id = ? AND e.position > ? AND e.position <= ? ORDER BY e.position`,
        "raw",
      ),
      // Raw (array) rows for the longest read (a whole history): mapped by position, no intermediate object.
      segmentMessages: p(
        `SELECT id, position, role, content, client_id, metadata, created_at
        FROM entries WHERE branch_id = ? AND position > ? AND position <= ? AND kind = 'message' ORDER BY position`,
        "raw",
      ),
      lastSegmentMessage: p(
        `SELECT id, position, role, content, client_id, metadata, created_at
        FROM entries WHERE branch_id = ? AND position > ? AND position <= ? AND kind = 'message' ORDER BY position DESC LIMIT 1`,
        "raw",
      ),
      countBranches: p(`SELECT count(*) FROM branches WHERE session_id = ?`, "pluck"),
      countCheckpoints: p(
        `SELECT count(*) FROM checkpoints WHERE user_id = ? AND session_id = ? AND (expires_at IS NULL OR expires_at > ?)`,
        "pluck",
      ),
      segmentTools: p(
        `SELECT ${TOOL_COLS} FROM ${TOOL_JOIN} WHERE e.branch_id = ? AND e.position > ? AND e.position <= ? AND e.kind = 'tool' ORDER BY e.position`,
      ),
      runningTools: p(`SELECT ${TOOL_COLS} FROM ${TOOL_JOIN} WHERE e.kind = 'tool' AND r.entry_id IS NULL ORDER BY e.seq`),
      getTool: p(`SELECT ${TOOL_COLS} FROM ${TOOL_JOIN} WHERE e.id = ? AND e.kind = 'tool'`),
      branchHeads: p(
        `SELECT b.id AS id, (SELECT max(position) FROM entries WHERE branch_id = b.id) AS head FROM branches b WHERE b.session_id = ?`,
      ),
      insertToolResult: p(
        `INSERT INTO tool_results (entry_id, status, result, error, hash, completed_at) VALUES (@entryId, @status, @result, @error, @hash, @completedAt)`,
      ),
      snapshotId: p(`SELECT id FROM state_snapshots WHERE hash = ?`),
      insertSnapshot: p(`INSERT INTO state_snapshots (hash, body) VALUES (?, ?)`),
      getSnapshot: p(`SELECT hash, body FROM state_snapshots WHERE id = ?`),
      // Checkpoints can be deleted, and a plain rowid would then hand a deleted newest seq to the next checkpoint,
      // which would show up on a later page of a listing begun before. Their seq is the insertion time in µs (never
      // below the largest seq + 1): it only grows, without AUTOINCREMENT's extra page write per insert. The insertion
      // time, not `created_at`: an imported checkpoint keeps its old creation time, which must not steer the order.
      insertCheckpoint:
        p(`INSERT INTO checkpoints (seq, id, session_id, branch_id, position, name, auto, metadata, user_id, state_id, head_hash, checksum, created_at, expires_at)
        VALUES (max(CAST(round(? * 1000) AS INTEGER), coalesce((SELECT max(seq) FROM checkpoints), 0) + 1),
          ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      getCheckpoint: p(`SELECT ${CHECKPOINT_COLS} FROM checkpoints WHERE id = ?`),
      // LEFT JOIN branches: a checkpoint whose branch is gone is damage (IntegrityError), not an unknown checkpoint.
      checkpointAnchor: p(
        `SELECT ${select("c", CHECKPOINT_FIELDS)}, ${select("b", BRANCH_FIELDS)}, ${select("a", ENTRY_FIELDS)},
          CASE WHEN p.seq IS NULL THEN NULL ELSE lower(hex(p.hash)) END
        FROM checkpoints c LEFT JOIN branches b ON b.id = c.branch_id
        LEFT JOIN entries a ON c.position - 1 > b.fork_position AND a.branch_id = c.branch_id AND a.position = c.position
        LEFT JOIN entries p ON c.position - 1 > b.fork_position AND p.branch_id = c.branch_id AND p.position = c.position - 1
        WHERE c.id = ?`,
        "raw",
      ),
      deleteCheckpoint: p(`DELETE FROM checkpoints WHERE id = ?`),
      deleteExpiredFiles: p(`DELETE FROM checkpoint_files WHERE checkpoint_id IN (SELECT id FROM checkpoints WHERE ${EXPIRED_UNUSED})`),
      deleteExpired: p(`DELETE FROM checkpoints WHERE ${EXPIRED_UNUSED} RETURNING ${CHECKPOINT_COLS}`),
      deleteUnreferencedSnapshots: p(`DELETE FROM state_snapshots
        WHERE id NOT IN (SELECT state_id FROM entries WHERE state_id IS NOT NULL)
          AND id NOT IN (SELECT state_id FROM checkpoints WHERE state_id IS NOT NULL)`),
      finishedMoves: p(
        `SELECT id FROM moves m WHERE m.status <> 'running' AND (@sessionId IS NULL OR m.session_id = @sessionId)
          AND NOT EXISTS (SELECT 1 FROM move_steps s WHERE s.move_id = m.id AND s.status = 'unknown')`,
        "pluck",
      ),
      deleteMoveSteps: p(`DELETE FROM move_steps WHERE move_id = ?`),
      deleteMove: p(`DELETE FROM moves WHERE id = ?`),
      sessionCheckpoints: p(
        `SELECT ${CHECKPOINT_COLS} FROM checkpoints INDEXED BY checkpoints_user_session_seq WHERE user_id = ? AND session_id = ? ORDER BY seq`,
      ),
      orphanCheckpoints: p(
        `SELECT c.id FROM checkpoints c WHERE (@sessionId IS NULL OR c.session_id = @sessionId) AND NOT EXISTS
        (SELECT 1 FROM sessions s WHERE s.id = c.session_id AND s.user_id = c.user_id) ORDER BY c.seq`,
        "pluck",
      ),
      movingFrom: p(`SELECT 1 FROM moves WHERE status = 'running' AND json_extract(spec, '$.newBranch.forkCheckpointId') = ?`, "pluck"),
      insertImportedCall: p(`INSERT INTO imported_calls (entry_id, session_id) VALUES (?, ?)`),
      importedCalls: p(`SELECT entry_id FROM imported_calls WHERE session_id = ?`, "pluck"),
      allSessionIds: p(`SELECT id FROM sessions ORDER BY seq`, "pluck"),
      sessionEvents: p(`SELECT seq, session_id AS sessionId, kind, ref_id AS refId, branch_id AS branchId, detail, created_at AS createdAt
        FROM events WHERE session_id = ? ORDER BY seq`),
      insertEvent: p(
        `INSERT INTO events (session_id, kind, ref_id, branch_id, detail, created_at) VALUES (@sessionId, @kind, @refId, @branchId, @detail, @createdAt)`,
      ),
      timeline: p(`SELECT * FROM (
          SELECT 'entry' AS source, e.kind AS kind, e.id AS refId, e.branch_id AS branchId, coalesce(e.role, e.tool) AS detail, e.created_at AS createdAt, e.seq AS seq
            FROM entries e JOIN branches b ON b.id = e.branch_id WHERE b.session_id = @sessionId
          UNION ALL
          SELECT 'checkpoint', 'checkpoint', id, branch_id, name, created_at, seq FROM checkpoints INDEXED BY checkpoints_user_session_seq
            WHERE user_id = @userId AND session_id = @sessionId
          UNION ALL
          SELECT 'branch', 'branch', id, id, reason || ' at position ' || fork_position, created_at, seq FROM branches WHERE session_id = @sessionId AND parent_id IS NOT NULL
          UNION ALL
          SELECT 'event', kind, ref_id, branch_id, detail, created_at, seq FROM events WHERE session_id = @sessionId)
        WHERE createdAt < @at OR (createdAt = @at AND (source < @source OR (source = @source AND seq < @seq)))
        ORDER BY createdAt DESC, source DESC, seq DESC LIMIT @limit`),
      appliedTools: p(`SELECT ${TOOL_COLS} FROM applied a JOIN entries e ON e.id = a.entry_id LEFT JOIN tool_results r ON r.entry_id = e.id
        WHERE a.session_id = ? ORDER BY a.applied_seq DESC`),
      markApplied: p(`INSERT OR REPLACE INTO applied (entry_id, session_id, result, applied_seq, applied_at)
        VALUES (?, ?, ?, (SELECT coalesce(max(applied_seq), 0) + 1 FROM applied), ?)`),
      unmarkApplied: p(`DELETE FROM applied WHERE entry_id = ?`),
      insertMove: p(`INSERT INTO moves (id, session_id, kind, spec, status, pid, pid_start, created_at, finished_at)
        VALUES (@id, @sessionId, @kind, @spec, @status, @pid, @pidStart, @createdAt, @finishedAt)`),
      runningMoves: p(`SELECT ${MOVE_COLS} FROM moves WHERE status = 'running' ORDER BY seq`),
      runningMovesOf: p(`SELECT ${MOVE_COLS} FROM moves WHERE status = 'running' AND session_id = ? ORDER BY seq`),
      claimMove: p(`UPDATE moves SET pid = ?, pid_start = ? WHERE id = ? AND status = 'running' AND pid = ? AND pid_start IS ?`),
      finishMove: p(`UPDATE moves SET status = ?, finished_at = ? WHERE id = ?`),
      insertStep: p(
        `INSERT INTO move_steps (move_id, idx, op, entry_id, status, result, error) VALUES (@moveId, @idx, @op, @entryId, @status, @result, @error)`,
      ),
      uncertain: p(
        `SELECT DISTINCT s.entry_id AS id FROM move_steps s JOIN moves m ON m.id = s.move_id WHERE m.session_id = ? AND s.status = 'unknown'`,
      ),
      steps: p(`SELECT ${STEP_COLS} FROM move_steps WHERE move_id = ? ORDER BY idx`),
      setStep: p(`UPDATE move_steps SET status = ?, result = ?, error = ? WHERE move_id = ? AND idx = ?`),
    };
  }

  get closed(): boolean {
    return this.#closed;
  }

  #unit<T>(begin: Statement, fn: () => T): T {
    if (this.#closed) throw new DatabaseError("CLOSED", "the forkpoint database is closed");
    if (this.db.inTransaction) return fn();
    try {
      begin.run();
    } catch (error) {
      throw translate(error);
    }
    try {
      const value = fn();
      this.#s.commit!.run();
      return value;
    } catch (error) {
      if (this.db.inTransaction) this.#s.rollback!.run();
      throw translate(error);
    }
  }

  async write<T>(fn: () => T): Promise<T> {
    const value = this.#unit(this.#s.begin!, fn);
    this.checkpointer?.committed();
    return value;
  }

  async read<T>(fn: () => T): Promise<T> {
    return this.#unit(this.#s.beginRead!, fn);
  }

  async query<T>(fn: () => T): Promise<T> {
    if (this.#closed) throw new DatabaseError("CLOSED", "the forkpoint database is closed");
    try {
      return fn();
    } catch (error) {
      throw translate(error);
    }
  }

  /** Synchronous unless the checkpoint worker runs: its connection closes first, so the writer's close folds the WAL back. */
  close(): Promise<void> {
    if (this.#closing) return this.#closing;
    this.#closed = true;
    const stopping = this.checkpointer?.close();
    if (!stopping) {
      this.db.close();
      this.#releaseWalFiles?.();
    }
    this.#closing = stopping ? stopping.finally(() => this.db.close()) : Promise.resolve();
    return this.#closing;
  }

  insertSession(row: Omit<SessionRow, "seq">): void {
    this.#s.insertSession!.run(row);
  }
  getSession(id: string): SessionRow | undefined {
    return this.#s.getSession!.get(id) as SessionRow | undefined;
  }
  getSessionInfo(id: string): SessionRow | undefined {
    return this.#s.getSessionInfo!.get(id) as SessionRow | undefined;
  }
  listSessions(userId: string, beforeSeq: number | undefined, limit: number): SessionRow[] {
    return this.#s.listSessions!.all(userId, beforeSeq ?? Number.MAX_SAFE_INTEGER, limit) as SessionRow[];
  }
  markHasTools(sessionId: string): void {
    this.#s.markHasTools!.run(sessionId);
  }
  getWorkspace(sessionId: string): WorkspaceRow | undefined {
    return this.#s.getWorkspace!.get(sessionId) as WorkspaceRow | undefined;
  }
  putWorkspace(row: WorkspaceRow): void {
    this.#s.putWorkspace!.run(row);
    this.#s.markHasWorkspace!.run(row.sessionId);
  }
  setWorkspaceRestoring(sessionId: string, restoring: string | null): void {
    this.#s.setWorkspaceRestoring!.run(restoring, sessionId);
  }
  claimWorkspaceRestore(sessionId: string, expected: string, next: string): boolean {
    return this.#s.claimWorkspaceRestore!.run(next, sessionId, expected).changes === 1;
  }
  restoringWorkspaces(): WorkspaceRow[] {
    return this.#s.restoringWorkspaces!.all() as WorkspaceRow[];
  }
  setWorkspaceManifest(sessionId: string, manifestId: number, at: number): void {
    this.#s.setWorkspaceManifest!.run(manifestId, at, sessionId);
  }
  insertBlob(hash: string, content: Buffer): void {
    this.#s.insertBlob!.run(hash, content);
  }
  getBlob(hash: string): Buffer | undefined {
    return this.#s.getBlob!.get(hash) as Buffer | undefined;
  }
  manifestId(hash: string): number | undefined {
    return this.#s.manifestId!.get(hash) as number | undefined;
  }
  insertManifest(hash: string, body: string): number {
    return Number(this.#s.insertManifest!.run(hash, body).lastInsertRowid);
  }
  getManifest(id: number): { hash: string; body: string } | undefined {
    return this.#s.getManifest!.get(id) as { hash: string; body: string } | undefined;
  }
  insertCheckpointFiles(row: CheckpointFilesRow & { checkpointId: string }): void {
    this.#s.insertCheckpointFiles!.run(row);
  }
  checkpointManifest(checkpointId: string): CheckpointFilesRow | undefined {
    return this.#s.checkpointManifest!.get(checkpointId) as CheckpointFilesRow | undefined;
  }
  lastCheckpointFiles(branchId: string, from: number, upTo: number): CheckpointFilesRow | undefined {
    return this.#s.lastCheckpointFiles!.get(branchId, from, upTo) as CheckpointFilesRow | undefined;
  }
  deleteUnreferencedFiles(): number {
    const manifests = this.#s.deleteUnreferencedManifests!.run().changes;
    return manifests + this.#s.deleteUnreferencedBlobs!.run().changes;
  }
  setCurrentBranch(sessionId: string, branchId: string, at: number): void {
    this.#s.setCurrent!.run(branchId, at, sessionId);
  }

  insertBranch(r: BranchRow): void {
    this.#s.insertBranch!.run(
      r.id,
      r.sessionId,
      r.parentId,
      r.forkCheckpointId,
      r.forkPosition,
      r.forkEntryId,
      r.name,
      r.reason,
      r.createdAt,
    );
  }
  getBranch(id: string): BranchRow | undefined {
    return this.#s.getBranch!.get(id) as BranchRow | undefined;
  }
  listBranches(sessionId: string): BranchRow[] {
    return this.#s.listBranches!.all(sessionId) as BranchRow[];
  }
  branchesForkedAt(sessionId: string, forkEntryId: string | null): BranchRow[] {
    return (forkEntryId === null ? this.#s.forkedAtZero!.all(sessionId) : this.#s.forkedAt!.all(sessionId, forkEntryId)) as BranchRow[];
  }
  countBranchesForkedFrom(checkpointId: string): number {
    return (this.#s.countForkedFrom!.get(checkpointId) as { n: number }).n;
  }

  insertEntry(r: NewEntry): void {
    // Hashes are hex strings to the engine and 32-byte blobs on disk.
    const reversible = r.reversible === undefined || r.reversible === null ? null : r.reversible ? 1 : 0;
    this.#s.insertEntry!.run(
      r.id,
      r.branchId,
      r.position,
      r.kind,
      r.role,
      r.content,
      r.tool,
      r.callId,
      r.clientId,
      r.metadata,
      r.stateId,
      r.msgCount,
      r.hash,
      r.createdAt,
      reversible,
    );
  }
  getEntry(id: string): EntryRow | undefined {
    return this.#s.getEntry!.get(id) as EntryRow | undefined;
  }
  entryWithBase(id: string): EntryBaseRow | undefined {
    const t = this.#s.entryWithBase!.get(id) as unknown[] | undefined;
    if (!t) return undefined;
    const b = ENTRY_FIELDS.length;
    return {
      entry: slice(t, 0, ENTRY_FIELDS)!,
      branch: slice(t, b, BRANCH_FIELDS)!,
      base: slice(t, b + BRANCH_FIELDS.length, HEAD_FIELDS),
    };
  }
  lastOwnEntry(branchId: string): HeadRow | undefined {
    const t = this.#s.lastOwn!.get(branchId) as HeadTuple | undefined;
    return t && headFromTuple(t, 0);
  }
  currentOf(sessionId: string): CurrentRow | undefined {
    const t = this.#s.currentOf!.get(sessionId) as CurrentTuple | undefined;
    if (!t) return undefined;
    return {
      session: {
        seq: t[0],
        id: t[1],
        userId: t[2],
        title: t[3],
        metadata: t[4],
        currentBranchId: t[5],
        originSessionId: t[6],
        originCheckpointId: t[7],
        hasTools: t[8] === 1,
        hasWorkspace: t[24] === 1,
        createdAt: t[9],
        updatedAt: t[10],
      },
      branch: {
        id: t[5],
        sessionId: t[11],
        parentId: t[12],
        forkCheckpointId: t[13],
        forkPosition: t[14],
        forkEntryId: t[15],
        name: t[16],
        reason: t[17],
        createdAt: t[18],
      },
      last: t[19] === null ? undefined : headFromTuple(t as unknown as HeadTuple, 19),
    };
  }
  ownEntryAt(branchId: string, position: number): EntryRow | undefined {
    return this.#s.ownAt!.get(branchId, position) as EntryRow | undefined;
  }
  lineage(branchId: string, upTo?: number): LineageSegment[] {
    return this.#s.lineage!.all(upTo ?? Number.MAX_SAFE_INTEGER, branchId) as LineageSegment[];
  }
  segmentEntries(segment: LineageSegment): EntryRow[] {
    if (segment.upTo <= segment.after) return [];
    const branchId = segment.branchId;
    return (this.#s.segment!.all(branchId, segment.after, segment.upTo) as EntryTuple[]).map((t) => ({
      seq: t[0],
      id: t[1],
      branchId,
      position: t[2],
      kind: t[3],
      role: t[4],
      content: t[5],
      tool: t[6],
      callId: t[7],
      clientId: t[8],
      metadata: t[9],
      stateId: t[10],
      msgCount: t[11],
      hash: t[12],
      createdAt: t[13],
    }));
  }
  lastSegmentMessage(segment: LineageSegment): MessageRow | undefined {
    if (segment.upTo <= segment.after) return undefined;
    const r = this.#s.lastSegmentMessage!.get(segment.branchId, segment.after, segment.upTo) as MessageTuple | undefined;
    return (
      r && {
        id: r[0],
        branchId: segment.branchId,
        position: r[1],
        role: r[2],
        content: r[3],
        clientId: r[4],
        metadata: r[5],
        createdAt: r[6],
      }
    );
  }
  countBranches(sessionId: string): number {
    return this.#s.countBranches!.get(sessionId) as number;
  }
  countCheckpoints(userId: string, sessionId: string, now: number): number {
    return this.#s.countCheckpoints!.get(userId, sessionId, now) as number;
  }
  segmentMessages<T>(segment: LineageSegment, map: (row: MessageRow) => T, out: T[]): void {
    if (segment.upTo <= segment.after) return;
    // One reused row object: `map` copies what it needs, so each message costs one allocation.
    // The segment's branch is every row's branch: not read per row.
    const row: MessageRow = {
      id: "",
      branchId: segment.branchId,
      position: 0,
      role: "",
      content: "",
      clientId: null,
      metadata: null,
      createdAt: 0,
    };
    for (const r of this.#s.segmentMessages!.all(segment.branchId, segment.after, segment.upTo) as MessageTuple[]) {
      row.id = r[0];
      row.position = r[1];
      row.role = r[2];
      row.content = r[3];
      row.clientId = r[4];
      row.metadata = r[5];
      row.createdAt = r[6];
      out.push(map(row));
    }
  }
  segmentTools(segment: LineageSegment): ToolRow[] {
    if (segment.upTo <= segment.after) return [];
    return toolRows(this.#s.segmentTools!.all(segment.branchId, segment.after, segment.upTo));
  }
  runningTools(): ToolRow[] {
    return toolRows(this.#s.runningTools!.all());
  }
  getTool(entryId: string): ToolRow | undefined {
    const row = this.#s.getTool!.get(entryId);
    return row === undefined ? undefined : toolRows([row])[0];
  }
  branchHeads(sessionId: string): Map<string, number> {
    const rows = this.#s.branchHeads!.all(sessionId) as { id: string; head: number | null }[];
    return new Map(rows.map((r) => [r.id, r.head ?? 0]));
  }

  insertToolResult(row: ToolResultRow): void {
    this.#s.insertToolResult!.run(row);
  }

  snapshotId(hash: string): number | undefined {
    return (this.#s.snapshotId!.get(hash) as { id: number } | undefined)?.id;
  }
  insertSnapshot(hash: string, body: string): number {
    return Number(this.#s.insertSnapshot!.run(hash, body).lastInsertRowid);
  }
  getSnapshot(id: number): { hash: string; body: string } | undefined {
    return this.#s.getSnapshot!.get(id) as { hash: string; body: string } | undefined;
  }

  insertCheckpoint(r: NewCheckpoint, insertedAt: number): void {
    this.#s.insertCheckpoint!.run(
      insertedAt,
      r.id,
      r.sessionId,
      r.branchId,
      r.position,
      r.name,
      r.auto ? 1 : 0,
      r.metadata,
      r.userId,
      r.stateId,
      r.headHash,
      r.checksum,
      r.createdAt,
      r.expiresAt,
    );
  }
  getCheckpoint(id: string): CheckpointRow | undefined {
    const row = this.#s.getCheckpoint!.get(id) as CheckpointRow | undefined;
    if (row) row.auto = Boolean(row.auto);
    return row;
  }
  checkpointAnchor(id: string): CheckpointAnchorRow | undefined {
    const t = this.#s.checkpointAnchor!.get(id) as unknown[] | undefined;
    if (!t) return undefined;
    const checkpoint = slice<CheckpointRow>(t, 0, CHECKPOINT_FIELDS)!;
    checkpoint.auto = Boolean(checkpoint.auto);
    const b = CHECKPOINT_FIELDS.length,
      a = b + BRANCH_FIELDS.length,
      p = a + ENTRY_FIELDS.length;
    return {
      checkpoint,
      branch: slice(t, b, BRANCH_FIELDS),
      anchor: slice(t, a, ENTRY_FIELDS),
      previousHash: (t[p] as string | null) ?? undefined,
    };
  }
  listCheckpoints(f: CheckpointFilter): ListedCheckpoint[] {
    // Built per filter combination; better-sqlite3 caches nothing, so keep the common cases' text stable.
    const where = ["user_id = @userId", "seq < @beforeSeq", "(expires_at IS NULL OR expires_at > @now)"];
    if (f.sessionId !== undefined) where.push("session_id = @sessionId");
    if (f.name !== undefined) where.push("name = @name");
    if (f.since !== undefined) where.push("created_at >= @since");
    // Times are stored with µs resolution; `until` is inclusive to the millisecond a Date can express.
    if (f.until !== undefined) where.push("created_at < @until + 1");
    if (f.auto !== undefined) where.push("auto = @auto");
    // One session's checkpoints: its own index reads O(page); the covering index would scan all of the user's.
    const from = f.sessionId !== undefined ? "checkpoints INDEXED BY checkpoints_user_session_seq" : "checkpoints";
    const sql = `SELECT ${LISTED_TUPLE} FROM ${from} WHERE ${where.join(" AND ")} ORDER BY seq DESC LIMIT @limit`;
    const tuples = this.#cached(sql).all({
      ...f,
      auto: f.auto === undefined ? undefined : f.auto ? 1 : 0,
      beforeSeq: f.beforeSeq ?? Number.MAX_SAFE_INTEGER,
    }) as ListedTuple[];
    return tuples.map(listedFromTuple);
  }
  deleteCheckpoint(id: string): void {
    this.#s.deleteCheckpointFiles!.run(id);
    this.#s.deleteCheckpoint!.run(id);
  }
  deleteExpiredCheckpoints(now: number, sessionId?: string): CheckpointRow[] {
    this.#s.deleteExpiredFiles!.run({ now, sessionId: sessionId ?? null });
    const rows = this.#s.deleteExpired!.all({ now, sessionId: sessionId ?? null }) as CheckpointRow[];
    for (const row of rows) row.auto = Boolean(row.auto);
    return rows;
  }
  deleteUnreferencedSnapshots(): number {
    return this.#s.deleteUnreferencedSnapshots!.run().changes;
  }
  deleteFinishedMoves(sessionId?: string): number {
    const ids = this.#s.finishedMoves!.all({ sessionId: sessionId ?? null }) as string[];
    for (const id of ids) {
      this.#s.deleteMoveSteps!.run(id);
      this.#s.deleteMove!.run(id);
    }
    return ids.length;
  }
  deleteSession(sessionId: string): void {
    this.langgraph.deleteThreadRows(sessionId);
    // Children before parents (foreign keys are on).
    const entriesOf = `SELECT e.id FROM entries e JOIN branches b ON b.id = e.branch_id WHERE b.session_id = ?`;
    for (const sql of [
      `DELETE FROM checkpoint_files WHERE checkpoint_id IN (SELECT id FROM checkpoints WHERE session_id = ?)`,
      `DELETE FROM tool_results WHERE entry_id IN (${entriesOf})`,
      `DELETE FROM applied WHERE session_id = ?`,
      `DELETE FROM imported_calls WHERE session_id = ?`,
      `DELETE FROM move_steps WHERE move_id IN (SELECT id FROM moves WHERE session_id = ?)`,
      `DELETE FROM moves WHERE session_id = ?`,
      `DELETE FROM events WHERE session_id = ?`,
      `DELETE FROM workspaces WHERE session_id = ?`,
      `DELETE FROM checkpoints WHERE session_id = ?`,
      `DELETE FROM entries WHERE branch_id IN (SELECT id FROM branches WHERE session_id = ?)`,
      `DELETE FROM branches WHERE session_id = ?`,
      `DELETE FROM sessions WHERE id = ?`,
    ]) {
      this.db.prepare(sql).run(sessionId);
    }
  }
  vacuum(): void {
    if (this.#closed) throw new DatabaseError("CLOSED", "the forkpoint database is closed");
    try {
      this.db.exec("VACUUM");
      if (!this.db.memory) truncateWal(this.db);
    } catch (error) {
      throw translate(error);
    }
  }
  databaseFiles(): string[] {
    if (this.db.memory) return [];
    const main = resolve(this.db.name);
    return [main, `${main}-wal`, `${main}-shm`, `${main}-journal`];
  }
  sizeBytes(): number {
    if (this.db.memory)
      return (this.db.pragma("page_count", { simple: true }) as number) * (this.db.pragma("page_size", { simple: true }) as number);
    const wal = `${this.db.name}-wal`;
    return statSync(this.db.name).size + (existsSync(wal) ? statSync(wal).size : 0);
  }
  sessionCheckpoints(userId: string, sessionId: string): CheckpointRow[] {
    const rows = this.#s.sessionCheckpoints!.all(userId, sessionId) as CheckpointRow[];
    for (const row of rows) row.auto = Boolean(row.auto);
    return rows;
  }
  orphanCheckpointIds(sessionId?: string): string[] {
    return this.#s.orphanCheckpoints!.all({ sessionId: sessionId ?? null }) as string[];
  }
  isMovingFrom(checkpointId: string): boolean {
    return this.#s.movingFrom!.get(checkpointId) !== undefined;
  }
  insertImportedCall(entryId: string, sessionId: string): void {
    this.#s.insertImportedCall!.run(entryId, sessionId);
  }
  importedCalls(sessionId: string): Set<string> {
    return new Set(this.#s.importedCalls!.all(sessionId) as string[]);
  }
  allSessionIds(): string[] {
    return this.#s.allSessionIds!.all() as string[];
  }

  insertEvent(row: Omit<EventRow, "seq">): void {
    this.#s.insertEvent!.run(row);
  }
  sessionEvents(sessionId: string): EventRow[] {
    return this.#s.sessionEvents!.all(sessionId) as EventRow[];
  }
  timeline(
    userId: string,
    sessionId: string,
    before: { createdAt: number; seq: number; source: string } | undefined,
    limit: number,
  ): TimelineRow[] {
    return this.#s.timeline!.all({
      userId,
      sessionId,
      at: before?.createdAt ?? Number.MAX_SAFE_INTEGER,
      source: before?.source ?? "~",
      seq: before?.seq ?? Number.MAX_SAFE_INTEGER,
      limit,
    }) as TimelineRow[];
  }

  appliedTools(sessionId: string): ToolRow[] {
    return toolRows(this.#s.appliedTools!.all(sessionId));
  }
  markApplied(entryId: string, sessionId: string, result: string | null, at: number): void {
    this.#s.markApplied!.run(entryId, sessionId, result, at);
  }
  unmarkApplied(entryId: string): void {
    this.#s.unmarkApplied!.run(entryId);
  }

  uncertainInvocations(sessionId: string): string[] {
    return (this.#s.uncertain!.all(sessionId) as { id: string }[]).map((r) => r.id);
  }
  insertMove(row: MoveRow): void {
    this.#s.insertMove!.run(row);
  }
  runningMoves(sessionId?: string): MoveRow[] {
    return (sessionId === undefined ? this.#s.runningMoves!.all() : this.#s.runningMovesOf!.all(sessionId)) as MoveRow[];
  }
  claimMove(id: string, owner: Pick<MoveRow, "pid" | "pidStart">, by: Pick<MoveRow, "pid" | "pidStart">): boolean {
    return this.#s.claimMove!.run(by.pid, by.pidStart, id, owner.pid, owner.pidStart).changes === 1;
  }
  finishMove(id: string, status: "done" | "failed", at: number): void {
    this.#s.finishMove!.run(status, at, id);
  }
  insertMoveSteps(rows: MoveStepRow[]): void {
    for (const row of rows) this.#s.insertStep!.run(row);
  }
  moveSteps(moveId: string): MoveStepRow[] {
    return this.#s.steps!.all(moveId) as MoveStepRow[];
  }
  setMoveStep(moveId: string, idx: number, status: MoveStepStatus, result: string | null, error: string | null): void {
    this.#s.setStep!.run(status, result, error, moveId, idx);
  }

  dump(): string {
    const tables = this.db
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
      .all() as { name: string }[];
    const out: Record<string, unknown[]> = {};
    for (const { name } of tables) out[name] = this.db.prepare(`SELECT * FROM "${name}" ORDER BY rowid`).all();
    return JSON.stringify(out);
  }

  #statements = new Map<string, Database.Statement>();
  #cached(sql: string): Database.Statement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql).raw(true);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  #operator: Partial<Record<"allSessions" | "users", Statement>> = {};
  listAllSessions(beforeSeq: number | undefined, limit: number): SessionRow[] {
    this.#operator.allSessions ??= prepare(this.db, `SELECT ${SESSION_INFO_COLS} FROM sessions WHERE seq < ? ORDER BY seq DESC LIMIT ?`);
    return this.#operator.allSessions.all(beforeSeq ?? Number.MAX_SAFE_INTEGER, limit) as SessionRow[];
  }
  listUsers(afterUserId: string | undefined, limit: number): UserRow[] {
    // GROUP BY over the (user_id, seq) index: a page reads only its users' sessions. A session's updatedAt counts its
    // current branch's last entry, as info() does.
    this.#operator.users ??= prepare(
      this.db,
      `SELECT user_id AS userId, count(*) AS sessions,
        max(max(updated_at, coalesce((SELECT created_at FROM entries WHERE branch_id = current_branch_id ORDER BY position DESC LIMIT 1), 0))) AS updatedAt
      FROM sessions WHERE user_id > ? GROUP BY user_id ORDER BY user_id LIMIT ?`,
    );
    return this.#operator.users.all(afterUserId ?? "", limit) as UserRow[];
  }
}
