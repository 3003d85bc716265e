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
  ENTRY_FIELDS,
  LISTED_COLS,
  MOVE_FORK_CHECKPOINT,
  expiredUnused,
  select,
  slice,
} from "./columns.js";
import type { Sql } from "./sql.js";

export function checkpointsTx(sql: Sql): CheckpointsTx {
  return {
    *insertCheckpoint(r: NewCheckpoint) {
      // seq is an identity: it grows in insertion order across every server and never repeats a deleted one's, so
      // `insertedAt` is not needed to order it (SQLite derives its seq from it).
      yield* sql.later(
        `INSERT INTO checkpoints (id, session_id, branch_id, position, name, auto, metadata, user_id, state_id, head_hash, checksum,
          created_at, expires_at)
        VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`,
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
        ],
      );
    },
    *getCheckpoint(id: string) {
      return yield* sql.one<CheckpointRow>(`SELECT ${CHECKPOINT_COLS} FROM checkpoints WHERE id = $1`, [id]);
    },
    *checkpointAnchor(id: string) {
      // LEFT JOIN branches: a checkpoint whose branch is gone is damage (IntegrityError), not an unknown checkpoint.
      const [t] = yield* sql.tuples(
        `SELECT ${select("c", CHECKPOINT_FIELDS)}, ${select("b", BRANCH_FIELDS)}, ${select("a", ENTRY_FIELDS)}, encode(p.hash, 'hex')
        FROM checkpoints c LEFT JOIN branches b ON b.id = c.branch_id
        LEFT JOIN entries a ON c.position - 1 > b.fork_position AND a.branch_id = c.branch_id AND a.position = c.position
        LEFT JOIN entries p ON c.position - 1 > b.fork_position AND p.branch_id = c.branch_id AND p.position = c.position - 1
        WHERE c.id = $1`,
        [id],
      );
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
      const limit = `$${args.push(f.limit)}`;
      return yield* sql.rows<ListedCheckpoint>(
        `SELECT ${LISTED_COLS} FROM checkpoints WHERE ${where.join(" AND ")} ORDER BY seq DESC LIMIT ${limit}`,
        args,
      );
    },
    *countCheckpoints(userId: string, sessionId: string, now: number) {
      const [n] = yield* sql.column<number>(
        `SELECT count(*) FROM checkpoints WHERE user_id = $1 AND session_id = $2 AND (expires_at IS NULL OR expires_at > $3::float8)`,
        [userId, sessionId, now],
      );
      return n!;
    },
    *deleteCheckpoint(id: string) {
      yield* sql.later(`DELETE FROM checkpoint_files WHERE checkpoint_id = $1`, [id]);
      yield* sql.later(`DELETE FROM checkpoints WHERE id = $1`, [id]);
    },
    *sessionCheckpoints(userId: string, sessionId: string) {
      return yield* sql.rows<CheckpointRow>(
        `SELECT ${CHECKPOINT_COLS} FROM checkpoints WHERE user_id = $1 AND session_id = $2 ORDER BY seq`,
        [userId, sessionId],
      );
    },
    *orphanCheckpointIds(sessionId?: string) {
      const orphan = `NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = c.session_id AND s.user_id = c.user_id)`;
      return sessionId === undefined
        ? yield* sql.column<string>(`SELECT c.id FROM checkpoints c WHERE ${orphan} ORDER BY c.seq`)
        : yield* sql.column<string>(`SELECT c.id FROM checkpoints c WHERE c.session_id = $1 AND ${orphan} ORDER BY c.seq`, [sessionId]);
    },
    *isMovingFrom(checkpointId: string) {
      const rows = yield* sql.column(`SELECT 1 FROM moves WHERE status = 'running' AND ${MOVE_FORK_CHECKPOINT} = $1 LIMIT 1`, [
        checkpointId,
      ]);
      return rows.length > 0;
    },
    *deleteExpiredCheckpoints(now: number, sessionId?: string) {
      // One statement: the files rows and their checkpoints go together; foreign keys are checked at its end.
      const args = sessionId === undefined ? [now] : [now, sessionId];
      return yield* sql.rows<CheckpointRow>(
        `WITH gone AS (SELECT id FROM checkpoints WHERE ${expiredUnused(sessionId !== undefined)}),
          files AS (DELETE FROM checkpoint_files WHERE checkpoint_id IN (SELECT id FROM gone)),
          deleted AS (DELETE FROM checkpoints WHERE id IN (SELECT id FROM gone) RETURNING ${CHECKPOINT_COLS})
        SELECT * FROM deleted ORDER BY seq`,
        args,
      );
    },
  };
}
