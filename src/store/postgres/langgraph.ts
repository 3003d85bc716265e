// The tables behind `ForkpointSaver`: PostgreSQL's statements and the port's LangGraphTx.
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
import { insertRow, insertWith } from "./batch.js";
import type { Sql } from "./sql.js";

const CP_COLS = `c.session_id AS "sessionId", c.checkpoint_id AS "checkpointId", c.parent_checkpoint_id AS "parentCheckpointId",
  c.fp_checkpoint_id AS "fpCheckpointId", c.type, c.checkpoint, c.metadata_type AS "metadataType", c.metadata,
  c.messages_version AS "messagesVersion"`;
const THREAD_COLS = `user_id AS "userId", thread_id AS "threadId", checkpoint_ns AS "checkpointNs", session_id AS "sessionId",
  start_checkpoint_id AS "startCheckpointId"`;
/**
 * JSON text as jsonb, where jsonb cannot hold what JSON can: a NUL (`\u0000`, which a LangGraph checkpoint's metadata
 * may carry inside a string) is read as U+FFFF, a noncharacter no text is meant to carry. Both sides of a comparison
 * go through it, so two values compare as they did on SQLite unless one holds U+FFFF where the other holds a NUL.
 */
const asJsonb = (json: string) => `replace(${json}, '\\u0000', '\\uffff')::jsonb`;
const POINT = `SELECT c.checkpoint_id AS "checkpointId", c.fp_checkpoint_id AS "fpCheckpointId", f.branch_id AS "branchId", f.position, f.seq,
    f.head_hash AS "headHash", (${asJsonb("f.metadata")} #>> '{langgraph,source}') AS source
  FROM lg_checkpoints c JOIN checkpoints f ON f.id = c.fp_checkpoint_id WHERE c.session_id = $1`;
const WRITE_COLS = `session_id AS "sessionId", checkpoint_id AS "checkpointId", task_id AS "taskId", idx, channel, type, value,
  task_path AS "taskPath"`;

const INSERT_THREAD = insertRow("lg_threads", ["user_id", "thread_id", "checkpoint_ns", "session_id", "start_checkpoint_id"]);
const INSERT_CHECKPOINT = insertRow("lg_checkpoints", [
  "session_id",
  "checkpoint_id",
  "parent_checkpoint_id",
  "fp_checkpoint_id",
  "type",
  "checkpoint",
  "metadata_type",
  "metadata",
  "messages_version",
]);
const INSERT_BLOB = insertRow("lg_blobs", ["session_id", "channel", "version", "type", "value"], { tail: "ON CONFLICT DO NOTHING" });
/** Every write in one statement, columns as arrays; on a taken key the write is kept, or replaced. */
const insertWrites = (onConflict: string) =>
  insertWith(
    "lg_writes",
    (p) => `INSERT INTO lg_writes (session_id, checkpoint_id, task_id, idx, channel, type, value, task_path)
    SELECT * FROM unnest(${p(1)}::text[], ${p(2)}::text[], ${p(3)}::text[], ${p(4)}::int[], ${p(5)}::text[], ${p(6)}::text[], ${p(7)}::bytea[], ${p(8)}::text[])
    ON CONFLICT (session_id, checkpoint_id, task_id, idx) DO ${onConflict}`,
  );
const INSERT_WRITES = insertWrites("NOTHING");
const REPLACE_WRITES = insertWrites(
  "UPDATE SET channel = excluded.channel, type = excluded.type, value = excluded.value, task_path = excluded.task_path",
);

/** This file's statements, named for the methods that run them. */
const s = {
  getThread: `SELECT ${THREAD_COLS} FROM lg_threads WHERE user_id = $1 AND thread_id = $2 AND checkpoint_ns = $3`,
  threadSessions: `SELECT session_id FROM lg_threads WHERE user_id = $1 AND thread_id = $2 ORDER BY checkpoint_ns`,
  isThreadSession: `SELECT 1 FROM lg_threads WHERE session_id = $1`,
  threadOfSession: `SELECT ${THREAD_COLS} FROM lg_threads WHERE session_id = $1`,
  pointOf: `${POINT} AND c.checkpoint_id = $2`,
  latestPoint: `${POINT} ORDER BY c.checkpoint_id DESC LIMIT 1`,
  latestPointOn: `${POINT} AND f.branch_id = $2 ORDER BY f.seq DESC, c.checkpoint_id DESC LIMIT 1`,
  checkpointInFp: `SELECT ${CP_COLS} FROM lg_checkpoints c WHERE c.fp_checkpoint_id = $1 ORDER BY c.checkpoint_id DESC LIMIT 1`,
  latestCheckpoint: `SELECT ${CP_COLS} FROM lg_checkpoints c WHERE c.session_id = $1 ORDER BY c.checkpoint_id DESC LIMIT 1`,
  checkpointById: `SELECT ${CP_COLS} FROM lg_checkpoints c WHERE c.session_id = $1 AND c.checkpoint_id = $2`,
  usesFpCheckpoint: `SELECT 1 FROM lg_checkpoints WHERE fp_checkpoint_id = $1 UNION ALL SELECT 1 FROM lg_threads WHERE start_checkpoint_id = $1 LIMIT 1`,
  landedOnBranch: `SELECT 1 FROM lg_checkpoints c JOIN checkpoints f ON f.id = c.fp_checkpoint_id
     WHERE c.session_id = $1 AND f.branch_id = $2 AND f.position >= $3 LIMIT 1`,
  landedSince: `SELECT 1 FROM lg_checkpoints c JOIN checkpoints f ON f.id = c.fp_checkpoint_id
     WHERE c.session_id = $1 AND f.branch_id = $2 AND f.seq > $3 LIMIT 1`,
  firstLandedSince: `SELECT MIN(f.position) AS position FROM lg_checkpoints c JOIN checkpoints f ON f.id = c.fp_checkpoint_id
     WHERE c.session_id = $1 AND f.branch_id = $2 AND f.seq > $3 AND f.position >= $4 AND f.position <= $5`,
  getBlob: `SELECT session_id AS "sessionId", channel, version, type, value FROM lg_blobs WHERE session_id = $1 AND channel = $2 AND version = $3`,
  hasChild: `SELECT 1 FROM lg_checkpoints WHERE session_id = $1 AND parent_checkpoint_id = $2 LIMIT 1`,
  writesOf: `SELECT ${WRITE_COLS} FROM lg_writes WHERE session_id = $1 AND checkpoint_id = $2 ORDER BY task_id, idx`,
  checkpointsOf: `SELECT ${CP_COLS} FROM lg_checkpoints c WHERE c.session_id = $1`,
  blobKeysOf: `SELECT channel, version FROM lg_blobs WHERE session_id = $1`,
  blobsOf: `SELECT session_id AS "sessionId", channel, version, type, value FROM lg_blobs WHERE session_id = $1`,
  allWritesOf: `SELECT ${WRITE_COLS} FROM lg_writes WHERE session_id = $1`,
  writeKeysOf: `SELECT checkpoint_id AS "checkpointId", task_id AS "taskId", idx, channel FROM lg_writes WHERE session_id = $1`,
  deleteCheckpointWrites: `DELETE FROM lg_writes WHERE session_id = $1 AND checkpoint_id = ANY($2::text[])`,
  deleteCheckpointsOf: `DELETE FROM lg_checkpoints WHERE session_id = $1 AND checkpoint_id = ANY($2::text[])`,
  deleteWrites: `DELETE FROM lg_writes w USING unnest($2::text[], $3::text[], $4::int[]) AS k(checkpoint_id, task_id, idx)
    WHERE w.session_id = $1 AND w.checkpoint_id = k.checkpoint_id AND w.task_id = k.task_id AND w.idx = k.idx`,
  deleteBlobs: `DELETE FROM lg_blobs b USING unnest($2::text[], $3::text[]) AS k(channel, version)
    WHERE b.session_id = $1 AND b.channel = k.channel AND b.version = k.version`,
};

export function langgraphTx(sql: Sql): LangGraphTx {
  return {
    *getThread(userId: string, threadId: string, checkpointNs: string) {
      return yield* sql.one<LgThreadRow>(s.getThread, [userId, threadId, checkpointNs]);
    },
    *insertThread(r: LgThreadRow) {
      yield* sql.later(INSERT_THREAD, [r.userId, r.threadId, r.checkpointNs, r.sessionId, r.startCheckpointId]);
    },
    *threadSessions(userId: string, threadId: string) {
      return yield* sql.column<string>(s.threadSessions, [userId, threadId]);
    },
    *isThreadSession(sessionId: string) {
      return (yield* sql.column(s.isThreadSession, [sessionId])).length > 0;
    },
    *threadOfSession(sessionId: string) {
      return yield* sql.one<LgThreadRow>(s.threadOfSession, [sessionId]);
    },
    *pointsOf(sessionId: string) {
      return yield* sql.rows<LgPointRow>(POINT, [sessionId]);
    },
    *pointOf(sessionId: string, checkpointId: string) {
      return yield* sql.one<LgPointRow>(s.pointOf, [sessionId, checkpointId]);
    },
    *latestPoint(sessionId: string) {
      return yield* sql.one<LgPointRow>(s.latestPoint, [sessionId]);
    },
    *latestPointOn(sessionId: string, branchId: string) {
      return yield* sql.one<LgPointRow>(s.latestPointOn, [sessionId, branchId]);
    },
    *checkpointInFp(fpCheckpointId: string) {
      return yield* sql.one<LgCheckpointRow>(s.checkpointInFp, [fpCheckpointId]);
    },
    *getCheckpoint(sessionId: string, checkpointId?: string) {
      return checkpointId === undefined
        ? yield* sql.one<LgCheckpointRow>(s.latestCheckpoint, [sessionId])
        : yield* sql.one<LgCheckpointRow>(s.checkpointById, [sessionId, checkpointId]);
    },
    *insertCheckpoint(r: LgCheckpointRow) {
      yield* sql.later(INSERT_CHECKPOINT, [
        r.sessionId,
        r.checkpointId,
        r.parentCheckpointId,
        r.fpCheckpointId,
        r.type,
        r.checkpoint,
        r.metadataType,
        r.metadata,
        r.messagesVersion,
      ]);
    },
    *usesFpCheckpoint(fpCheckpointId: string) {
      const rows = yield* sql.column(s.usesFpCheckpoint, [fpCheckpointId]);
      return rows.length > 0;
    },
    *landedOnBranch(sessionId: string, branchId: string, position: number) {
      const rows = yield* sql.column(s.landedOnBranch, [sessionId, branchId, position]);
      return rows.length > 0;
    },
    *landedSince(sessionId: string, branchId: string, seq: number) {
      const rows = yield* sql.column(s.landedSince, [sessionId, branchId, seq]);
      return rows.length > 0;
    },
    *firstLandedSince(sessionId: string, branchId: string, seq: number, from: number, upTo: number) {
      const [position] = yield* sql.column<number | string | null>(s.firstLandedSince, [sessionId, branchId, seq, from, upTo]);
      return position === null || position === undefined ? undefined : Number(position);
    },
    *listCheckpoints(filter: LgListFilter) {
      const args: unknown[] = [filter.userId];
      const where = ["t.user_id = $1"];
      const add = (clause: string, ...values: unknown[]) => where.push(clause.replace(/\?/g, () => `$${args.push(values.shift())}`));
      if (filter.threadId !== undefined) add("t.thread_id = ?", filter.threadId);
      if (filter.checkpointNs !== undefined) add("t.checkpoint_ns = ?", filter.checkpointNs);
      if (filter.checkpointId !== undefined) add("c.checkpoint_id = ?", filter.checkpointId);
      if (filter.before !== undefined) add("c.checkpoint_id < ?", filter.before);
      for (const [key, json] of filter.metadata) {
        // Metadata serialized as JSON is matched in SQL (jsonb equality); CASE keeps other serializations from being parsed.
        add(
          `CASE WHEN c.metadata_type = 'json' THEN (${asJsonb("convert_from(c.metadata, 'UTF8')")} -> ?::text) = ${asJsonb("?")} ELSE false END`,
          key.replaceAll("\0", "\uffff"),
          json,
        );
      }
      const limit = filter.limit === undefined ? "" : ` LIMIT $${args.push(Math.max(0, Math.floor(filter.limit)))}`;
      return yield* sql.rows<LgListedRow>(
        `SELECT ${CP_COLS}, t.thread_id AS "threadId", t.checkpoint_ns AS "checkpointNs"
        FROM lg_checkpoints c JOIN lg_threads t ON t.session_id = c.session_id
        WHERE ${where.join(" AND ")} ORDER BY c.checkpoint_id DESC${limit}`,
        args,
      );
    },
    *insertBlob(r: LgBlobRow) {
      yield* sql.later(INSERT_BLOB, [r.sessionId, r.channel, r.version, r.type, r.value]);
    },
    *getBlob(sessionId: string, channel: string, version: string) {
      return yield* sql.one<LgBlobRow>(s.getBlob, [sessionId, channel, version]);
    },
    *insertWrites(rows: LgWriteRow[], replace: boolean) {
      if (rows.length === 0) return;
      // One statement for every write. A statement may update a row only once: of writes to the same (task, idx),
      // the last one stays, as when SQLite replaces them one by one.
      const byKey = new Map(rows.map((r) => [JSON.stringify([r.sessionId, r.checkpointId, r.taskId, r.idx]), r]));
      const list = replace ? [...byKey.values()] : rows;
      yield* sql.later(replace ? REPLACE_WRITES : INSERT_WRITES, [
        list.map((r) => r.sessionId),
        list.map((r) => r.checkpointId),
        list.map((r) => r.taskId),
        list.map((r) => r.idx),
        list.map((r) => r.channel),
        list.map((r) => r.type),
        list.map((r) => r.value),
        list.map((r) => r.taskPath),
      ]);
    },
    *hasChild(sessionId: string, checkpointId: string) {
      const rows = yield* sql.column(s.hasChild, [sessionId, checkpointId]);
      return rows.length > 0;
    },
    *writesOf(sessionId: string, checkpointId: string) {
      return yield* sql.rows<LgWriteRow>(s.writesOf, [sessionId, checkpointId]);
    },
    *deleteThreadRows(sessionId: string) {
      for (const table of ["lg_writes", "lg_blobs", "lg_checkpoints", "lg_threads"]) {
        yield* sql.later(`DELETE FROM ${table} WHERE session_id = $1`, [sessionId]);
      }
    },
    *checkpointsOf(sessionId: string) {
      return yield* sql.rows<LgCheckpointRow>(s.checkpointsOf, [sessionId]);
    },
    *blobKeysOf(sessionId: string) {
      return yield* sql.rows<LgBlobKey>(s.blobKeysOf, [sessionId]);
    },
    *writeKeysOf(sessionId: string) {
      return yield* sql.rows<LgWriteKey>(s.writeKeysOf, [sessionId]);
    },
    *blobsOf(sessionId: string) {
      return yield* sql.rows<LgBlobRow>(s.blobsOf, [sessionId]);
    },
    *allWritesOf(sessionId: string) {
      return yield* sql.rows<LgWriteRow>(s.allWritesOf, [sessionId]);
    },
    // Each list is one statement (an array parameter), whatever its length. None of them changes a session's current
    // branch or head (`keepsCurrent`).
    *deleteCheckpointRows(sessionId: string, checkpointIds: readonly string[]) {
      if (checkpointIds.length === 0) return;
      yield* sql.later(s.deleteCheckpointWrites, [sessionId, checkpointIds], true);
      yield* sql.later(s.deleteCheckpointsOf, [sessionId, checkpointIds], true);
    },
    *deleteWrites(sessionId: string, keys: readonly Omit<LgWriteKey, "channel">[]) {
      if (keys.length === 0) return;
      yield* sql.later(
        s.deleteWrites,
        [sessionId, keys.map((k) => k.checkpointId), keys.map((k) => k.taskId), keys.map((k) => k.idx)],
        true,
      );
    },
    *deleteWritesOf(sessionId: string, checkpointIds: readonly string[]) {
      if (checkpointIds.length === 0) return;
      yield* sql.later(s.deleteCheckpointWrites, [sessionId, checkpointIds], true);
    },
    *deleteBlobs(sessionId: string, keys: readonly LgBlobKey[]) {
      if (keys.length === 0) return;
      yield* sql.later(s.deleteBlobs, [sessionId, keys.map((k) => k.channel), keys.map((k) => k.version)], true);
    },
  };
}
