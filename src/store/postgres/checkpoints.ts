// Checkpoints: inserted with a growing seq, read, listed per user, expired: PostgreSQL's statements and the port's CheckpointsTx.
import type {
  BranchRow,
  CheckpointFilter,
  CheckpointRow,
  CheckpointsTx,
  EntryRow,
  ListedCheckpoint,
  NewCheckpoint,
} from "../port/index.js";
import {
  BRANCH_FIELDS,
  CHECKPOINT_COLS,
  CHECKPOINT_FIELDS,
  DB_NOW_MS,
  ENTRY_FIELDS,
  LISTED_COLS,
  MOVE_FORK_CHECKPOINT,
  expiredUnused,
  select,
  slice,
} from "./columns.js";
import { lastCheckpointAt } from "./current.js";
import { insertRow, insertWith } from "./batch.js";
import { keepRequests } from "./requests.js";
import type { Sql } from "./sql.js";
import { indexedMetadata, type CheckpointNameStats, type IndexedMetadataRow, type RetentionRow } from "../port/checkpoints.js";

const RETENTION_COLS = `seq, id, branch_id AS "branchId", name, auto, created_at AS "createdAt"`;

const CHECKPOINT_INSERT_COLS = [
  "id",
  "session_id",
  "branch_id",
  "position",
  "name",
  "auto",
  "metadata",
  "user_id",
  "state_id",
  "head_hash",
  "checksum",
  "created_at",
  "expires_at",
  "weighed",
];
/** A checkpoint; weighed by retention when its session ($14, its id again) has a policy. */
const WEIGHED = { expr: { weighed: (p: string) => `coalesce((SELECT retention IS NOT NULL FROM sessions WHERE id = ${p}), false)` } };
const INSERT_CHECKPOINT = insertRow("checkpoints", CHECKPOINT_INSERT_COLS, WEIGHED);
/** A checkpoint that keeps the turn's request on its row ($15-$17): the partial index `checkpoints_request` refuses a taken id. */
const INSERT_REQUESTED = insertRow(
  "checkpoints",
  [...CHECKPOINT_INSERT_COLS, "request_id", "request_fingerprint", "request_answer"],
  WEIGHED,
);
/** `insert` (of `n` parameters) with the metadata's index rows ($n+1 keys, $n+2 values) in the same statement. */
const withIndexed = (insert: string, n: number) => `WITH c AS (${insert} RETURNING seq)
  INSERT INTO checkpoint_metadata (cp_user, key, value, cp_seq)
  SELECT $8, k, v, c.seq FROM c, unnest($${n + 1}::text[], $${n + 2}::text[]) AS u(k, v) ON CONFLICT DO NOTHING`;
const INSERT_CHECKPOINT_INDEXED = withIndexed(INSERT_CHECKPOINT.text, 14);
const INSERT_REQUESTED_INDEXED = withIndexed(INSERT_REQUESTED.text, 17);
/**
 * An id the ledger's table holds (another verb applied it) is taken as well: its row inserted again fails on the
 * primary key (a RequestTakenError), with no round trip of its own; an id it does not hold inserts nothing.
 */
const REFUSE_LEDGER_HELD = insertWith(
  "requests",
  (p) => `INSERT INTO requests (session_id, request_id, fingerprint, answer, created_at)
  SELECT session_id, request_id, fingerprint, answer, created_at FROM requests WHERE session_id = ${p(1)} AND request_id = ${p(2)}`,
);

/** This file's statements, named for the methods that run them. */
const s = {
  lastCheckpointAt: `SELECT ${lastCheckpointAt("$1", "$2")}`,
  getCheckpoint: `SELECT ${CHECKPOINT_COLS} FROM checkpoints WHERE id = $1`,
  checkpointAnchor: `SELECT ${select("c", CHECKPOINT_FIELDS)}, ${select("b", BRANCH_FIELDS)}, ${select("a", ENTRY_FIELDS)}, encode(p.hash, 'hex')
    FROM checkpoints c LEFT JOIN branches b ON b.id = c.branch_id
    LEFT JOIN entries a ON c.position - 1 > b.fork_position AND a.branch_id = c.branch_id AND a.position = c.position
    LEFT JOIN entries p ON c.position - 1 > b.fork_position AND p.branch_id = c.branch_id AND p.position = c.position - 1
    WHERE c.id = $1`,
  newestPerBranch: `SELECT c.* FROM unnest($1::text[]) AS b(id) CROSS JOIN LATERAL (SELECT ${LISTED_COLS} FROM checkpoints
      WHERE branch_id = b.id AND user_id = $2 AND (expires_at IS NULL OR expires_at > $3::float8) ORDER BY seq DESC LIMIT $4) c`,
  countCheckpoints: `SELECT count(*) FROM checkpoints WHERE user_id = $1 AND session_id = $2 AND (expires_at IS NULL OR expires_at > $3::float8)`,
  deleteFiles: `DELETE FROM checkpoint_files WHERE checkpoint_id = $1`,
  deleteMetadata: `DELETE FROM checkpoint_metadata WHERE cp_seq = (SELECT seq FROM checkpoints WHERE id = $1)`,
  metadataRows: `SELECT cp_user AS "userId", key, value FROM checkpoint_metadata WHERE cp_seq = $1::bigint`,
  deleteRow: `DELETE FROM checkpoints WHERE id = $1`,
  keepRequest: keepRequests("id = $1"),
  sessionCheckpoints: `SELECT ${CHECKPOINT_COLS} FROM checkpoints WHERE user_id = $1 AND session_id = $2 ORDER BY seq`,
  lastFilesPosition: `SELECT max(c.position) FROM checkpoints c JOIN checkpoint_files f ON f.checkpoint_id = c.id
    WHERE c.branch_id = $1 AND c.position >= $2::bigint AND c.position <= $3::bigint`,
  isMovingFrom: `SELECT 1 FROM moves WHERE status = 'running' AND ${MOVE_FORK_CHECKPOINT} = $1 LIMIT 1`,
  // Their requests go to the ledger's table first, as the checkpoints were when they answered (the CTE reads the rows
  // as they were before the statement).
  expireCheckpoints: `WITH kept AS (${keepRequests("id = ANY($2::text[])")})
    UPDATE checkpoints SET expires_at = $1, checksum = e.checksum, request_id = NULL, request_fingerprint = NULL, request_answer = NULL
    FROM unnest($2::text[], $3::text[]) AS e(id, checksum) WHERE checkpoints.id = e.id`,
  liveCheckpointAt: `SELECT ${RETENTION_COLS} FROM checkpoints WHERE user_id = $1 AND session_id = $2 AND (expires_at IS NULL OR expires_at > $3::float8)
    ORDER BY seq DESC LIMIT 1 OFFSET $4`,
  // keepLast per branch: one kind's newest live ones, by the partial index (branch, kind, seq) read backwards.
  branchCheckpoints: `SELECT ${RETENTION_COLS} FROM checkpoints WHERE branch_id = $1 AND weighed AND auto = $2
      AND (expires_at IS NULL OR expires_at > $3::float8) ORDER BY seq DESC LIMIT $4`,
  newestOnBranch: `SELECT ${RETENTION_COLS} FROM checkpoints WHERE branch_id = $1 AND seq < $2::bigint
      AND (expires_at IS NULL OR expires_at > $3::float8) ORDER BY seq DESC LIMIT 1`,
  firstCheckpointSeq: `SELECT seq FROM checkpoints WHERE user_id = $1 AND session_id = $2 ORDER BY seq LIMIT 1`,
  agedCheckpoints: `SELECT ${RETENTION_COLS} FROM checkpoints WHERE session_id = $1 AND weighed AND created_at > $2::float8 AND created_at <= $3::float8
      AND (expires_at IS NULL OR expires_at > $4::float8) ORDER BY created_at, seq LIMIT $5`,
  checkpointInUse: `SELECT 1 FROM branches WHERE session_id = $1 AND fork_checkpoint_id = $2
    UNION ALL SELECT 1 FROM moves WHERE status = 'running' AND ${MOVE_FORK_CHECKPOINT} = $2
    UNION ALL SELECT 1 FROM lg_checkpoints WHERE session_id = $1 AND fp_checkpoint_id = $2
    UNION ALL SELECT 1 FROM lg_threads WHERE session_id = $1 AND start_checkpoint_id = $2
    UNION ALL SELECT 1 FROM checkpoint_holds WHERE checkpoint_id = $2 AND until > ${DB_NOW_MS} LIMIT 1`,
  holdCheckpoint: `INSERT INTO checkpoint_holds (checkpoint_id, session_id, until) VALUES ($1, $2, ${DB_NOW_MS} + $3::float8)
    ON CONFLICT (checkpoint_id) DO UPDATE SET until = excluded.until`,
  releaseCheckpoint: `DELETE FROM checkpoint_holds WHERE checkpoint_id = $1`,
  checkpointStats: `SELECT name, count(*)::int AS count, min(created_at) AS "firstAt", max(created_at) AS "lastAt" FROM checkpoints
    WHERE user_id = $1 AND session_id = $2 AND (expires_at IS NULL OR expires_at > $3::float8) GROUP BY name ORDER BY name`,
};

export function checkpointsTx(sql: Sql): CheckpointsTx {
  return {
    *insertCheckpoint(r: NewCheckpoint) {
      // seq is an identity: it grows in insertion order across every server and never repeats a deleted one's, so
      // `insertedAt` is not needed to order it (SQLite derives its seq from it).
      const pairs = indexedMetadata(r.metadata);
      const q = r.request;
      if (q) yield* sql.later(REFUSE_LEDGER_HELD, [r.sessionId, q.id], true);
      // With metadata, its index rows go in the same statement (most checkpoints have none: they pay nothing).
      const [plain, indexed] = q ? [INSERT_REQUESTED, INSERT_REQUESTED_INDEXED] : [INSERT_CHECKPOINT, INSERT_CHECKPOINT_INDEXED];
      yield* sql.later(
        pairs.length === 0 ? plain : indexed,
        [
          r.id,
          r.sessionId,
          r.branchId,
          r.position,
          r.name,
          r.auto,
          r.metadata,
          r.userId,
          r.stateId,
          r.headHash,
          r.checksum,
          r.createdAt,
          r.expiresAt,
          r.sessionId,
          ...(q ? [q.id, q.fingerprint, q.answer] : []),
          ...(pairs.length === 0 ? [] : [pairs.map((p) => p[0]), pairs.map((p) => p[1])]),
        ],
        true,
      );
      sql.wroteCheckpoint(r.sessionId, r.createdAt);
    },
    *lastCheckpointAt(userId: string, sessionId: string) {
      const [t] = yield* sql.tuples(s.lastCheckpointAt, [userId, sessionId]);
      return t![0] as number;
    },
    *getCheckpoint(id: string) {
      return yield* sql.one<CheckpointRow>(s.getCheckpoint, [id]);
    },
    *checkpointAnchor(id: string) {
      // LEFT JOIN branches: a checkpoint whose branch is gone is damage (IntegrityError), not an unknown checkpoint.
      const [t] = yield* sql.tuples(s.checkpointAnchor, [id]);
      if (!t) return undefined;
      const b = CHECKPOINT_FIELDS.length,
        a = b + BRANCH_FIELDS.length,
        p = a + ENTRY_FIELDS.length;
      return {
        checkpoint: slice<CheckpointRow>(t, 0, CHECKPOINT_FIELDS)!,
        branch: slice<BranchRow>(t, b, BRANCH_FIELDS),
        anchor: slice<EntryRow>(t, a, ENTRY_FIELDS),
        previousHash: (t[p] as string | null) ?? undefined,
      };
    },
    *listCheckpoints(f: CheckpointFilter) {
      const args: unknown[] = [f.userId, f.beforeSeq ?? Number.MAX_SAFE_INTEGER, f.now];
      const where = ["user_id = $1", "seq < $2::bigint", "(expires_at IS NULL OR expires_at > $3::float8)"];
      const add = (clause: string, value: unknown) => where.push(clause.replace("?", `$${args.push(value)}`));
      if (f.sessionId !== undefined) add("session_id = ?", f.sessionId);
      if (f.name !== undefined) add("name = ?", f.name);
      if (f.since !== undefined) add("created_at >= ?::float8", f.since);
      // Times are stored with µs resolution; `until` is inclusive to the millisecond a Date can express.
      if (f.until !== undefined) add("created_at < ?::float8 + 1", f.until);
      if (f.auto !== undefined) add("auto = ?", f.auto);
      let from = "checkpoints";
      let order = "seq";
      if (f.metadata?.length) {
        // The first equality walks its index entries newest first; the others are looked up per row in the same index.
        const [[key, value], ...rest] = f.metadata as [[string, string], ...[string, string][]];
        from = "checkpoint_metadata m0 JOIN checkpoints ON checkpoints.seq = m0.cp_seq";
        where.push("m0.cp_user = $1", "m0.cp_seq < $2::bigint");
        add("m0.key = ?", key);
        add("m0.value = ?", value);
        for (const [k, v] of rest) {
          const kp = `$${args.push(k)}`;
          const vp = `$${args.push(v)}`;
          where.push(
            `EXISTS (SELECT 1 FROM checkpoint_metadata m WHERE m.cp_user = $1 AND m.key = ${kp} AND m.value = ${vp} AND m.cp_seq = m0.cp_seq)`,
          );
        }
        order = "m0.cp_seq";
      }
      const limit = `$${args.push(f.limit)}`;
      return yield* sql.rows<ListedCheckpoint>(
        `SELECT ${LISTED_COLS} FROM ${from} WHERE ${where.join(" AND ")} ORDER BY ${order} DESC LIMIT ${limit}`,
        args,
      );
    },
    *newestPerBranch(userId: string, branchIds: readonly string[], now: number, limit: number) {
      if (branchIds.length === 0) return [];
      // One statement: each branch's newest by its index (a top-N per branch), whatever the session's total.
      return yield* sql.rows<ListedCheckpoint>(s.newestPerBranch, [branchIds, userId, now, limit]);
    },
    *countCheckpoints(userId: string, sessionId: string, now: number) {
      const [n] = yield* sql.column<number>(s.countCheckpoints, [userId, sessionId, now]);
      return n!;
    },
    *deleteCheckpoint(id: string) {
      yield* sql.later(s.deleteFiles, [id]);
      yield* sql.later(s.deleteMetadata, [id]);
      yield* sql.later(s.keepRequest, [id]);
      yield* sql.later(s.deleteRow, [id]);
    },
    *sessionCheckpoints(userId: string, sessionId: string) {
      return yield* sql.rows<CheckpointRow>(s.sessionCheckpoints, [userId, sessionId]);
    },
    *orphanCheckpointIds(sessionId?: string) {
      const orphan = `NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = c.session_id AND s.user_id = c.user_id)`;
      return sessionId === undefined
        ? yield* sql.column<string>(`SELECT c.id FROM checkpoints c WHERE ${orphan} ORDER BY c.seq`)
        : yield* sql.column<string>(`SELECT c.id FROM checkpoints c WHERE c.session_id = $1 AND ${orphan} ORDER BY c.seq`, [sessionId]);
    },
    *checkpointMetadataRows(cpSeq: number) {
      return yield* sql.rows<IndexedMetadataRow>(s.metadataRows, [cpSeq]);
    },
    *lastFilesPosition(branchId: string, from: number, upTo: number) {
      const [position] = yield* sql.column<number | null>(s.lastFilesPosition, [branchId, from, upTo]);
      return position ?? undefined;
    },
    *isMovingFrom(checkpointId: string) {
      const rows = yield* sql.column(s.isMovingFrom, [checkpointId]);
      return rows.length > 0;
    },
    *deleteExpiredCheckpoints(now: number, sessionId?: string) {
      // One statement: the files rows and their checkpoints go together; foreign keys are checked at its end.
      const args = sessionId === undefined ? [now] : [now, sessionId];
      return yield* sql.rows<CheckpointRow>(
        `WITH gone AS (SELECT id FROM checkpoints WHERE ${expiredUnused(sessionId !== undefined)}),
          files AS (DELETE FROM checkpoint_files WHERE checkpoint_id IN (SELECT id FROM gone)),
          meta AS (DELETE FROM checkpoint_metadata WHERE cp_seq IN (SELECT seq FROM checkpoints WHERE id IN (SELECT id FROM gone))),
          kept AS (${keepRequests("id IN (SELECT id FROM gone)")}),
          deleted AS (DELETE FROM checkpoints WHERE id IN (SELECT id FROM gone) RETURNING ${CHECKPOINT_COLS}),
          lapsed AS (DELETE FROM checkpoint_holds WHERE until <= ${DB_NOW_MS} ${sessionId === undefined ? "" : "AND session_id = $2"})
        SELECT * FROM deleted ORDER BY seq`,
        args,
      );
    },
    *expireCheckpoints(expired: { id: string; checksum: string }[], at: number) {
      if (expired.length === 0) return;
      yield* sql.exec(s.expireCheckpoints, [at, expired.map((e) => e.id), expired.map((e) => e.checksum)]);
    },
    *liveCheckpointAt(userId: string, sessionId: string, now: number, offset: number) {
      return yield* sql.one<RetentionRow>(s.liveCheckpointAt, [userId, sessionId, now, offset]);
    },
    *newestNamed(sessionId: string, name: string | null, now: number, beforeSeq: number) {
      const live = `session_id = $1 AND weighed AND seq < $2::bigint AND (expires_at IS NULL OR expires_at > $3::float8)`;
      return name === null
        ? yield* sql.one<RetentionRow>(
            `SELECT ${RETENTION_COLS} FROM checkpoints WHERE ${live} AND name IS NULL ORDER BY seq DESC LIMIT 1`,
            [sessionId, beforeSeq, now],
          )
        : yield* sql.one<RetentionRow>(`SELECT ${RETENTION_COLS} FROM checkpoints WHERE ${live} AND name = $4 ORDER BY seq DESC LIMIT 1`, [
            sessionId,
            beforeSeq,
            now,
            name,
          ]);
    },
    *branchCheckpoints(branchId: string, auto: boolean, now: number, limit: number) {
      return yield* sql.rows<RetentionRow>(s.branchCheckpoints, [branchId, auto, now, limit]);
    },
    *newestOnBranch(branchId: string, now: number, beforeSeq: number) {
      return yield* sql.one<RetentionRow>(s.newestOnBranch, [branchId, beforeSeq, now]);
    },
    *firstCheckpointSeq(userId: string, sessionId: string) {
      const [seq] = yield* sql.column<number>(s.firstCheckpointSeq, [userId, sessionId]);
      return seq;
    },
    *agedCheckpoints(sessionId: string, afterAt: number, cutoff: number, now: number, limit: number) {
      return yield* sql.rows<RetentionRow>(s.agedCheckpoints, [sessionId, afterAt, cutoff, now, limit]);
    },
    *checkpointInUse(sessionId: string, checkpointId: string) {
      const rows = yield* sql.column(s.checkpointInUse, [sessionId, checkpointId]);
      return rows.length > 0;
    },
    *holdCheckpoint(checkpointId: string, sessionId: string, holdMs: number) {
      yield* sql.exec(s.holdCheckpoint, [checkpointId, sessionId, holdMs]);
    },
    *releaseCheckpoint(checkpointId: string) {
      yield* sql.exec(s.releaseCheckpoint, [checkpointId]);
    },
    *checkpointStats(userId: string, sessionId: string, now: number) {
      return yield* sql.rows<CheckpointNameStats>(s.checkpointStats, [userId, sessionId, now]);
    },
  };
}
