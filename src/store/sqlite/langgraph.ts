// The tables behind `ForkpointSaver`: SQLite's statements and the port's LangGraphTx.
import type Database from "better-sqlite3";
import type {
  LangGraphTx,
  LgBlobKey,
  LgBlobRow,
  LgCheckpointRow,
  LgListedRow,
  LgListFilter,
  LgPointRow,
  LgThreadRow,
  LgWriteKey,
  LgWriteRow,
} from "../port/index.js";
import { prepare } from "./object-rows.js";

const CP_COLS = `c.session_id AS sessionId, c.checkpoint_id AS checkpointId, c.parent_checkpoint_id AS parentCheckpointId,
  c.fp_checkpoint_id AS fpCheckpointId, c.type, c.checkpoint, c.metadata_type AS metadataType, c.metadata, c.messages_version AS messagesVersion`;

export function langgraphTx(db: Database.Database): LangGraphTx {
  const p = (sql: string) => prepare(db, sql);
  const s = {
    getThread: p(`SELECT user_id AS userId, thread_id AS threadId, checkpoint_ns AS checkpointNs, session_id AS sessionId,
      start_checkpoint_id AS startCheckpointId FROM lg_threads WHERE user_id = ? AND thread_id = ? AND checkpoint_ns = ?`),
    insertThread: p(`INSERT INTO lg_threads (user_id, thread_id, checkpoint_ns, session_id, start_checkpoint_id)
      VALUES (@userId, @threadId, @checkpointNs, @sessionId, @startCheckpointId)`),
    threadSessions: p(`SELECT session_id AS sessionId FROM lg_threads WHERE user_id = ? AND thread_id = ?`),
    sessionThread: p(`SELECT 1 AS one FROM lg_threads WHERE session_id = ?`),
    threadOfSession: p(`SELECT user_id AS userId, thread_id AS threadId, checkpoint_ns AS checkpointNs, session_id AS sessionId,
      start_checkpoint_id AS startCheckpointId FROM lg_threads WHERE session_id = ?`),
    points: p(`SELECT c.checkpoint_id AS checkpointId, c.fp_checkpoint_id AS fpCheckpointId, f.branch_id AS branchId, f.position, f.seq,
      f.head_hash AS headHash, f.metadata ->> '$.langgraph.source' AS source
      FROM lg_checkpoints c JOIN checkpoints f ON f.id = c.fp_checkpoint_id WHERE c.session_id = ?`),
    point: p(`SELECT c.checkpoint_id AS checkpointId, c.fp_checkpoint_id AS fpCheckpointId, f.branch_id AS branchId, f.position, f.seq,
      f.head_hash AS headHash, f.metadata ->> '$.langgraph.source' AS source
      FROM lg_checkpoints c JOIN checkpoints f ON f.id = c.fp_checkpoint_id WHERE c.session_id = ? AND c.checkpoint_id = ?`),
    latestPoint:
      p(`SELECT c.checkpoint_id AS checkpointId, c.fp_checkpoint_id AS fpCheckpointId, f.branch_id AS branchId, f.position, f.seq,
      f.head_hash AS headHash, f.metadata ->> '$.langgraph.source' AS source
      FROM lg_checkpoints c JOIN checkpoints f ON f.id = c.fp_checkpoint_id WHERE c.session_id = ? ORDER BY c.checkpoint_id DESC LIMIT 1`),
    latestPointOn:
      p(`SELECT c.checkpoint_id AS checkpointId, c.fp_checkpoint_id AS fpCheckpointId, f.branch_id AS branchId, f.position, f.seq,
      f.head_hash AS headHash, f.metadata ->> '$.langgraph.source' AS source FROM lg_checkpoints c JOIN checkpoints f ON f.id = c.fp_checkpoint_id
      WHERE c.session_id = ? AND f.branch_id = ? ORDER BY f.seq DESC, c.checkpoint_id DESC LIMIT 1`),
    byFpCheckpoint: p(`SELECT ${CP_COLS} FROM lg_checkpoints c WHERE c.fp_checkpoint_id = ? ORDER BY c.checkpoint_id DESC LIMIT 1`),
    getCheckpoint: p(`SELECT ${CP_COLS} FROM lg_checkpoints c WHERE c.session_id = ? AND c.checkpoint_id = ?`),
    latestCheckpoint: p(`SELECT ${CP_COLS} FROM lg_checkpoints c WHERE c.session_id = ? ORDER BY c.checkpoint_id DESC LIMIT 1`),
    hasChild: p(`SELECT 1 AS one FROM lg_checkpoints WHERE session_id = ? AND parent_checkpoint_id = ? LIMIT 1`),
    insertCheckpoint: p(`INSERT INTO lg_checkpoints (session_id, checkpoint_id, parent_checkpoint_id, fp_checkpoint_id, type, checkpoint,
      metadata_type, metadata, messages_version) VALUES (@sessionId, @checkpointId, @parentCheckpointId, @fpCheckpointId, @type, @checkpoint,
      @metadataType, @metadata, @messagesVersion)`),
    usesFpCheckpoint: p(`SELECT 1 AS one FROM lg_checkpoints WHERE fp_checkpoint_id = @id
      UNION ALL SELECT 1 FROM lg_threads WHERE start_checkpoint_id = @id LIMIT 1`),
    landedOnBranch: p(`SELECT 1 AS one FROM lg_checkpoints c JOIN checkpoints f ON f.id = c.fp_checkpoint_id
      WHERE c.session_id = ? AND f.branch_id = ? AND f.position >= ? LIMIT 1`),
    landedSince: p(`SELECT 1 AS one FROM lg_checkpoints c JOIN checkpoints f ON f.id = c.fp_checkpoint_id
      WHERE c.session_id = ? AND f.branch_id = ? AND f.seq > ? LIMIT 1`),
    firstLandedSince: p(`SELECT MIN(f.position) AS position FROM lg_checkpoints c JOIN checkpoints f ON f.id = c.fp_checkpoint_id
      WHERE c.session_id = ? AND f.branch_id = ? AND f.seq > ? AND f.position >= ? AND f.position <= ?`),
    insertBlob: p(
      `INSERT OR IGNORE INTO lg_blobs (session_id, channel, version, type, value) VALUES (@sessionId, @channel, @version, @type, @value)`,
    ),
    getBlob: p(
      `SELECT session_id AS sessionId, channel, version, type, value FROM lg_blobs WHERE session_id = ? AND channel = ? AND version = ?`,
    ),
    insertWrite: p(`INSERT OR IGNORE INTO lg_writes (session_id, checkpoint_id, task_id, idx, channel, type, value, task_path)
      VALUES (@sessionId, @checkpointId, @taskId, @idx, @channel, @type, @value, @taskPath)`),
    replaceWrite: p(`INSERT OR REPLACE INTO lg_writes (session_id, checkpoint_id, task_id, idx, channel, type, value, task_path)
      VALUES (@sessionId, @checkpointId, @taskId, @idx, @channel, @type, @value, @taskPath)`),
    writesOf: p(`SELECT session_id AS sessionId, checkpoint_id AS checkpointId, task_id AS taskId, idx, channel, type, value,
      task_path AS taskPath FROM lg_writes WHERE session_id = ? AND checkpoint_id = ?`),
    deleteWrites: p(`DELETE FROM lg_writes WHERE session_id = ?`),
    deleteBlobs: p(`DELETE FROM lg_blobs WHERE session_id = ?`),
    deleteCheckpoints: p(`DELETE FROM lg_checkpoints WHERE session_id = ?`),
    deleteThread: p(`DELETE FROM lg_threads WHERE session_id = ?`),
    checkpointsOf: p(`SELECT ${CP_COLS} FROM lg_checkpoints c WHERE c.session_id = ?`),
    blobKeysOf: p(`SELECT channel, version FROM lg_blobs WHERE session_id = ?`),
    blobsOf: p(`SELECT session_id AS sessionId, channel, version, type, value FROM lg_blobs WHERE session_id = ?`),
    allWritesOf: p(`SELECT session_id AS sessionId, checkpoint_id AS checkpointId, task_id AS taskId, idx, channel, type, value,
      task_path AS taskPath FROM lg_writes WHERE session_id = ?`),
    writeKeysOf: p(`SELECT checkpoint_id AS checkpointId, task_id AS taskId, idx, channel FROM lg_writes WHERE session_id = ?`),
    deleteCheckpointRow: p(`DELETE FROM lg_checkpoints WHERE session_id = ? AND checkpoint_id = ?`),
    deleteWritesOfId: p(`DELETE FROM lg_writes WHERE session_id = ? AND checkpoint_id = ?`),
    deleteWrite: p(`DELETE FROM lg_writes WHERE session_id = ? AND checkpoint_id = ? AND task_id = ? AND idx = ?`),
    deleteBlob: p(`DELETE FROM lg_blobs WHERE session_id = ? AND channel = ? AND version = ?`),
  };
  return {
    *getThread(userId: string, threadId: string, checkpointNs: string) {
      return s.getThread.get(userId, threadId, checkpointNs) as LgThreadRow | undefined;
    },
    *insertThread(row: LgThreadRow) {
      s.insertThread.run(row);
    },
    /** The sessions of every namespace of a user's thread. */
    *threadSessions(userId: string, threadId: string) {
      return (s.threadSessions.all(userId, threadId) as { sessionId: string }[]).map((r) => r.sessionId);
    },
    /** True when the session holds a LangGraph thread. */
    *isThreadSession(sessionId: string) {
      return s.sessionThread.get(sessionId) !== undefined;
    },
    /** The thread (namespace) a session holds, if it holds one. */
    *threadOfSession(sessionId: string) {
      return s.threadOfSession.get(sessionId) as LgThreadRow | undefined;
    },
    /** Where each of the session's LangGraph checkpoints sits in its tree (one row per checkpoint, in no order). */
    *pointsOf(sessionId: string) {
      return s.points.all(sessionId) as LgPointRow[];
    },
    /** Where one LangGraph checkpoint of the session sits in its tree. */
    *pointOf(sessionId: string, checkpointId: string) {
      return s.point.get(sessionId, checkpointId) as LgPointRow | undefined;
    },
    /** Where the session's newest LangGraph checkpoint (by id: LangGraph's are time-ordered) sits in its tree. */
    *latestPoint(sessionId: string) {
      return s.latestPoint.get(sessionId) as LgPointRow | undefined;
    },
    /** Where the LangGraph checkpoint stored latest on the branch sits: its forkpoint checkpoint's seq highest, then its id. */
    *latestPointOn(sessionId: string, branchId: string) {
      return s.latestPointOn.get(sessionId, branchId) as LgPointRow | undefined;
    },
    /** The LangGraph checkpoint stored in this forkpoint checkpoint (the newest, should there be several). */
    *checkpointInFp(fpCheckpointId: string) {
      return s.byFpCheckpoint.get(fpCheckpointId) as LgCheckpointRow | undefined;
    },
    /** The checkpoint with this id, or the thread's newest (ids are time-ordered uuid6) when `checkpointId` is absent. */
    *getCheckpoint(sessionId: string, checkpointId?: string) {
      const row = checkpointId === undefined ? s.latestCheckpoint.get(sessionId) : s.getCheckpoint.get(sessionId, checkpointId);
      return row as LgCheckpointRow | undefined;
    },
    *insertCheckpoint(row: LgCheckpointRow) {
      s.insertCheckpoint.run(row);
    },
    /** True when a LangGraph checkpoint is stored in this forkpoint checkpoint, or it is a thread's empty start. */
    *usesFpCheckpoint(fpCheckpointId: string) {
      return s.usesFpCheckpoint.get({ id: fpCheckpointId }) !== undefined;
    },
    *landedOnBranch(sessionId: string, branchId: string, position: number) {
      return s.landedOnBranch.get(sessionId, branchId, position) !== undefined;
    },
    *landedSince(sessionId: string, branchId: string, seq: number) {
      return s.landedSince.get(sessionId, branchId, seq) !== undefined;
    },
    *firstLandedSince(sessionId: string, branchId: string, seq: number, from: number, upTo: number) {
      const row = s.firstLandedSince.get(sessionId, branchId, seq, from, upTo) as { position: number | null } | undefined;
      return row?.position ?? undefined;
    },
    /** A user's checkpoints matching `filter`, newest id first. */
    *listCheckpoints(filter: LgListFilter) {
      const where = ["t.user_id = ?"];
      const args: unknown[] = [filter.userId];
      if (filter.threadId !== undefined) (where.push("t.thread_id = ?"), args.push(filter.threadId));
      if (filter.checkpointNs !== undefined) (where.push("t.checkpoint_ns = ?"), args.push(filter.checkpointNs));
      if (filter.checkpointId !== undefined) (where.push("c.checkpoint_id = ?"), args.push(filter.checkpointId));
      if (filter.before !== undefined) (where.push("c.checkpoint_id < ?"), args.push(filter.before));
      for (const [key, json] of filter.metadata) {
        // Metadata serialized as JSON is matched in SQL; `->` gives a value's minified JSON text.
        where.push(`c.metadata_type = 'json' AND (CAST(c.metadata AS TEXT) -> ?) IS json(?)`);
        args.push(`$.${JSON.stringify(key)}`, json);
      }
      const limit = filter.limit === undefined ? "" : ` LIMIT ${Math.max(0, Math.floor(filter.limit))}`;
      const sql = `SELECT ${CP_COLS}, t.thread_id AS threadId, t.checkpoint_ns AS checkpointNs
        FROM lg_checkpoints c JOIN lg_threads t ON t.session_id = c.session_id
        WHERE ${where.join(" AND ")} ORDER BY c.checkpoint_id DESC${limit}`;
      return db.prepare(sql).all(...args) as LgListedRow[];
    },
    *insertBlob(row: LgBlobRow) {
      s.insertBlob.run(row);
    },
    *getBlob(sessionId: string, channel: string, version: string) {
      return s.getBlob.get(sessionId, channel, version) as LgBlobRow | undefined;
    },
    /** Stores writes; `replace` overwrites earlier ones at the same (task, idx), as LangGraph's special writes do. */
    *insertWrites(rows: LgWriteRow[], replace: boolean) {
      const stmt = replace ? s.replaceWrite : s.insertWrite;
      for (const row of rows) stmt.run(row);
    },
    /** Whether the graph went on from this checkpoint (some checkpoint of the session names it as its parent). */
    *hasChild(sessionId: string, checkpointId: string) {
      return s.hasChild.get(sessionId, checkpointId) !== undefined;
    },

    *writesOf(sessionId: string, checkpointId: string) {
      return s.writesOf.all(sessionId, checkpointId) as LgWriteRow[];
    },
    /** Deletes the thread's LangGraph rows (its session is deleted by the caller). */
    *deleteThreadRows(sessionId: string) {
      for (const statement of [s.deleteWrites, s.deleteBlobs, s.deleteCheckpoints, s.deleteThread]) statement.run(sessionId);
    },
    *checkpointsOf(sessionId: string) {
      return s.checkpointsOf.all(sessionId) as LgCheckpointRow[];
    },
    *blobKeysOf(sessionId: string) {
      return s.blobKeysOf.all(sessionId) as LgBlobKey[];
    },
    *writeKeysOf(sessionId: string) {
      return s.writeKeysOf.all(sessionId) as LgWriteKey[];
    },
    *blobsOf(sessionId: string) {
      return s.blobsOf.all(sessionId) as LgBlobRow[];
    },
    *allWritesOf(sessionId: string) {
      return s.allWritesOf.all(sessionId) as LgWriteRow[];
    },
    // One prepared statement per row: SQLite runs each in microseconds, with no statement per list length.
    *deleteCheckpointRows(sessionId: string, checkpointIds: readonly string[]) {
      for (const id of checkpointIds) {
        s.deleteWritesOfId.run(sessionId, id);
        s.deleteCheckpointRow.run(sessionId, id);
      }
    },
    *deleteWrites(sessionId: string, keys: readonly Omit<LgWriteKey, "channel">[]) {
      for (const k of keys) s.deleteWrite.run(sessionId, k.checkpointId, k.taskId, k.idx);
    },
    *deleteWritesOf(sessionId: string, checkpointIds: readonly string[]) {
      for (const id of checkpointIds) s.deleteWritesOfId.run(sessionId, id);
    },
    *deleteBlobs(sessionId: string, keys: readonly LgBlobKey[]) {
      for (const k of keys) s.deleteBlob.run(sessionId, k.channel, k.version);
    },
  };
}
