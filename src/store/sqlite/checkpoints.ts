// Checkpoints: inserted with a growing seq, read, listed per user, expired: SQLite's statements and the port's CheckpointsTx.
import type Database from "better-sqlite3";
import {
  RequestTakenError,
  type CheckpointFilter,
  type CheckpointRow,
  type CheckpointsTx,
  type ListedCheckpoint,
  type NewCheckpoint,
} from "../port/index.js";
import {
  BRANCH_FIELDS,
  CHECKPOINT_COLS,
  CHECKPOINT_FIELDS,
  DB_NOW_MS,
  ENTRY_FIELDS,
  EXPIRED_UNUSED,
  LISTED_TUPLE,
  type ListedTuple,
  listedFromTuple,
  select,
  slice,
  LAST_CHECKPOINT_AT,
} from "./columns.js";
import { prepare, type RowMode } from "./object-rows.js";
import { keepRequests } from "./requests.js";
import { indexedMetadata, type CheckpointNameStats, type IndexedMetadataRow, type RetentionRow } from "../port/checkpoints.js";

const LIVE = "(expires_at IS NULL OR expires_at > @now)";
const RETENTION_COLS = "seq, id, branch_id AS branchId, name, auto, created_at AS createdAt";

/** A retention row as SQLite reads it (`auto` an integer) made the port's. */
function retentionRow(row: unknown): RetentionRow | undefined {
  if (row === undefined) return undefined;
  const r = row as RetentionRow;
  return { ...r, auto: Boolean(r.auto) };
}

/**
 * The INSERT of a checkpoint, with `columns` and their `values` after the others. Checkpoints can be deleted, and a
 * plain rowid would then hand a deleted newest seq to the next checkpoint, which would show up on a later page of a
 * listing begun before. Their seq is the insertion time in µs (never below the largest seq + 1): it only grows, without
 * AUTOINCREMENT's extra page write per insert. The insertion time, not `created_at`: an imported checkpoint keeps its
 * old creation time, which must not steer the order.
 */
const insertCheckpoint = (columns: string, values: string) =>
  `INSERT INTO checkpoints (seq, id, session_id, branch_id, position, name, auto, metadata, user_id, state_id, head_hash, checksum, created_at, expires_at, weighed${columns})
    VALUES (max(CAST(round(? * 1000) AS INTEGER), coalesce((SELECT max(seq) FROM checkpoints), 0) + 1),
      ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, coalesce((SELECT retention IS NOT NULL FROM sessions WHERE id = ?), 0)${values})`;

export function checkpointsTx(db: Database.Database): CheckpointsTx {
  const p = (sql: string, mode?: RowMode) => prepare(db, sql, mode);
  const listings = new Map<string, Database.Statement>();
  /** Listing statements, one per filter combination, prepared once. */
  const cached = (sql: string): Database.Statement => {
    let statement = listings.get(sql);
    if (!statement) listings.set(sql, (statement = db.prepare(sql).raw(true)));
    return statement;
  };
  const s = {
    insertCheckpoint: p(insertCheckpoint("", "")),
    // A turn's request on its row: one entry of the partial index `checkpoints_request`, which refuses a taken id.
    insertRequested: p(insertCheckpoint(", request_id, request_fingerprint, request_answer", ", ?, ?, ?")),
    inLedger: p(`SELECT 1 FROM requests WHERE session_id = ? AND request_id = ?`, "pluck"),
    getCheckpoint: p(`SELECT ${CHECKPOINT_COLS} FROM checkpoints WHERE id = ?`),
    lastCheckpointAt: p(`SELECT ${LAST_CHECKPOINT_AT("?", "?")}`, "pluck"),
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
    newestOfBranch: p(
      `SELECT ${LISTED_TUPLE} FROM checkpoints INDEXED BY checkpoints_branch
      WHERE branch_id = @branchId AND user_id = @userId AND ${LIVE} ORDER BY seq DESC LIMIT @limit`,
      "raw",
    ),
    countCheckpoints: p(
      `SELECT count(*) FROM checkpoints WHERE user_id = ? AND session_id = ? AND (expires_at IS NULL OR expires_at > ?)`,
      "pluck",
    ),
    deleteCheckpointFiles: p(`DELETE FROM checkpoint_files WHERE checkpoint_id = ?`),
    insertMetadata: p(`INSERT OR IGNORE INTO checkpoint_metadata (cp_user, key, value, cp_seq) VALUES (?, ?, ?, ?)`),
    deleteMetadata: p(`DELETE FROM checkpoint_metadata WHERE cp_seq = (SELECT seq FROM checkpoints WHERE id = ?)`),
    metadataRows: p(`SELECT cp_user AS userId, key, value FROM checkpoint_metadata INDEXED BY checkpoint_metadata_seq WHERE cp_seq = ?`),
    deleteExpiredMetadata: p(`DELETE FROM checkpoint_metadata WHERE cp_seq IN (SELECT seq FROM checkpoints WHERE ${EXPIRED_UNUSED})`),
    // Its request goes to the ledger's table first (`keepRequest`), as the checkpoint was when it answered.
    expire: p(`UPDATE checkpoints SET expires_at = ?, checksum = ?, request_id = NULL, request_fingerprint = NULL, request_answer = NULL
      WHERE id = ?`),
    liveAt: p(`SELECT ${RETENTION_COLS} FROM checkpoints INDEXED BY checkpoints_session_user_seq
      WHERE user_id = @userId AND session_id = @sessionId AND ${LIVE} ORDER BY seq DESC LIMIT 1 OFFSET @offset`),
    newestNamed: p(`SELECT ${RETENTION_COLS} FROM checkpoints INDEXED BY checkpoints_session_name_seq
      WHERE session_id = @sessionId AND weighed = 1 AND name = @name AND seq < @beforeSeq AND ${LIVE} ORDER BY seq DESC LIMIT 1`),
    newestUnnamed: p(`SELECT ${RETENTION_COLS} FROM checkpoints INDEXED BY checkpoints_session_name_seq
      WHERE session_id = @sessionId AND weighed = 1 AND name IS NULL AND seq < @beforeSeq AND ${LIVE} ORDER BY seq DESC LIMIT 1`),
    // keepLast per branch: one kind's newest live ones, by the partial index (branch, kind, seq) read backwards.
    branchKind: p(`SELECT ${RETENTION_COLS} FROM checkpoints INDEXED BY checkpoints_branch_kind_seq
      WHERE branch_id = @branchId AND weighed = 1 AND auto = @auto AND ${LIVE} ORDER BY seq DESC LIMIT @limit`),
    // The branch index holds the rowid (seq): its newest are read backwards from `beforeSeq`.
    newestOnBranch: p(`SELECT ${RETENTION_COLS} FROM checkpoints INDEXED BY checkpoints_branch
      WHERE branch_id = @branchId AND seq < @beforeSeq AND ${LIVE} ORDER BY seq DESC LIMIT 1`),
    firstSeq: p(
      `SELECT seq FROM checkpoints INDEXED BY checkpoints_session_user_seq WHERE user_id = ? AND session_id = ? ORDER BY seq LIMIT 1`,
      "pluck",
    ),
    aged: p(`SELECT ${RETENTION_COLS} FROM checkpoints INDEXED BY checkpoints_session_weighed_created
      WHERE session_id = @sessionId AND weighed = 1 AND created_at > @afterAt AND created_at <= @cutoff AND ${LIVE} ORDER BY created_at, seq LIMIT @limit`),
    inUse: p(
      `SELECT 1 FROM branches WHERE session_id = @sessionId AND fork_checkpoint_id = @id
      UNION ALL SELECT 1 FROM moves WHERE status = 'running' AND json_extract(spec, '$.newBranch.forkCheckpointId') = @id
      UNION ALL SELECT 1 FROM lg_checkpoints WHERE session_id = @sessionId AND fp_checkpoint_id = @id
      UNION ALL SELECT 1 FROM lg_threads WHERE session_id = @sessionId AND start_checkpoint_id = @id
      UNION ALL SELECT 1 FROM checkpoint_holds WHERE checkpoint_id = @id AND until > ${DB_NOW_MS} LIMIT 1`,
      "pluck",
    ),
    stats: p(`SELECT name, count(*) AS count, min(created_at) AS firstAt, max(created_at) AS lastAt
      FROM checkpoints INDEXED BY checkpoints_session_user_seq WHERE user_id = @userId AND session_id = @sessionId AND ${LIVE}
      GROUP BY name ORDER BY name`),
    deleteCheckpoint: p(`DELETE FROM checkpoints WHERE id = ?`),
    sessionCheckpoints: p(
      `SELECT ${CHECKPOINT_COLS} FROM checkpoints INDEXED BY checkpoints_session_user_seq WHERE user_id = ? AND session_id = ? ORDER BY seq`,
    ),
    orphanCheckpoints: p(
      `SELECT c.id FROM checkpoints c WHERE (@sessionId IS NULL OR c.session_id = @sessionId) AND NOT EXISTS
    (SELECT 1 FROM sessions s WHERE s.id = c.session_id AND s.user_id = c.user_id) ORDER BY c.seq`,
      "pluck",
    ),
    lastFilesPosition: p(
      `SELECT max(c.position) FROM checkpoints c JOIN checkpoint_files f ON f.checkpoint_id = c.id
    WHERE c.branch_id = ? AND c.position >= ? AND c.position <= ?`,
      "pluck",
    ),
    movingFrom: p(`SELECT 1 FROM moves WHERE status = 'running' AND json_extract(spec, '$.newBranch.forkCheckpointId') = ?`, "pluck"),
    deleteExpiredFiles: p(`DELETE FROM checkpoint_files WHERE checkpoint_id IN (SELECT id FROM checkpoints WHERE ${EXPIRED_UNUSED})`),
    deleteExpired: p(`DELETE FROM checkpoints WHERE ${EXPIRED_UNUSED} RETURNING ${CHECKPOINT_COLS}`),
    keepExpiredRequests: p(keepRequests(`(${EXPIRED_UNUSED})`)),
    keepRequest: p(keepRequests("id = ?")),
    deleteLapsedHolds: p(`DELETE FROM checkpoint_holds WHERE until <= ${DB_NOW_MS} AND (@sessionId IS NULL OR session_id = @sessionId)`),
    hold: p(`INSERT INTO checkpoint_holds (checkpoint_id, session_id, until) VALUES (?, ?, ${DB_NOW_MS} + ?)
      ON CONFLICT (checkpoint_id) DO UPDATE SET until = excluded.until`),
    release: p(`DELETE FROM checkpoint_holds WHERE checkpoint_id = ?`),
  };
  return {
    *insertCheckpoint(r: NewCheckpoint, insertedAt: number) {
      const q = r.request;
      // An id the ledger's table holds (another verb applied it) is taken as well.
      if (q && s.inLedger.get(r.sessionId, q.id) !== undefined) throw new RequestTakenError();
      const { lastInsertRowid } = (q ? s.insertRequested : s.insertCheckpoint).run(
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
        r.sessionId,
        ...(q ? [q.id, q.fingerprint, q.answer] : []),
      );
      // Most checkpoints carry no metadata: they pay nothing here.
      for (const [key, value] of indexedMetadata(r.metadata)) s.insertMetadata.run(r.userId, key, value, lastInsertRowid);
    },
    *lastCheckpointAt(userId: string, sessionId: string) {
      return s.lastCheckpointAt.get(userId, sessionId) as number;
    },
    *getCheckpoint(id: string) {
      const row = s.getCheckpoint.get(id) as CheckpointRow | undefined;
      if (row) row.auto = Boolean(row.auto);
      return row;
    },
    *checkpointAnchor(id: string) {
      const t = s.checkpointAnchor.get(id) as unknown[] | undefined;
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
    },
    *listCheckpoints(f: CheckpointFilter) {
      // Built per filter combination; better-sqlite3 caches nothing, so keep the common cases' text stable.
      const where = ["user_id = @userId", "seq < @beforeSeq", "(expires_at IS NULL OR expires_at > @now)"];
      if (f.sessionId !== undefined) where.push("session_id = @sessionId");
      if (f.name !== undefined) where.push("name = @name");
      if (f.since !== undefined) where.push("created_at >= @since");
      // Times are stored with µs resolution; `until` is inclusive to the millisecond a Date can express.
      if (f.until !== undefined) where.push("created_at < @until + 1");
      if (f.auto !== undefined) where.push("auto = @auto");
      // One session's checkpoints: its own index reads O(page); the covering index would scan all of the user's.
      let from = f.sessionId !== undefined ? "checkpoints INDEXED BY checkpoints_session_user_seq" : "checkpoints";
      let order = "seq";
      const pairs: Record<string, string> = {};
      if (f.metadata?.length) {
        // The first equality walks its index entries newest first; the others are looked up per row in the same index.
        const [first, ...rest] = f.metadata;
        pairs.k0 = first![0];
        pairs.v0 = first![1];
        from = `checkpoint_metadata m0 CROSS JOIN checkpoints ON checkpoints.seq = m0.cp_seq`;
        where.push("m0.cp_user = @userId", "m0.key = @k0", "m0.value = @v0", "m0.cp_seq < @beforeSeq");
        rest.forEach(([key, value], i) => {
          pairs[`k${i + 1}`] = key;
          pairs[`v${i + 1}`] = value;
          where.push(
            `EXISTS (SELECT 1 FROM checkpoint_metadata m WHERE m.cp_user = @userId AND m.key = @k${i + 1} AND m.value = @v${i + 1} AND m.cp_seq = m0.cp_seq)`,
          );
        });
        order = "m0.cp_seq";
      }
      const sql = `SELECT ${LISTED_TUPLE} FROM ${from} WHERE ${where.join(" AND ")} ORDER BY ${order} DESC LIMIT @limit`;
      const tuples = cached(sql).all({
        ...pairs,
        ...f,
        metadata: undefined,
        auto: f.auto === undefined ? undefined : f.auto ? 1 : 0,
        beforeSeq: f.beforeSeq ?? Number.MAX_SAFE_INTEGER,
      }) as ListedTuple[];
      return tuples.map(listedFromTuple);
    },
    *newestPerBranch(userId: string, branchIds: readonly string[], now: number, limit: number) {
      const rows: ListedCheckpoint[] = [];
      for (const branchId of branchIds)
        for (const t of s.newestOfBranch.all({ branchId, userId, now, limit }) as ListedTuple[]) rows.push(listedFromTuple(t));
      return rows;
    },
    *countCheckpoints(userId: string, sessionId: string, now: number) {
      return s.countCheckpoints.get(userId, sessionId, now) as number;
    },
    *deleteCheckpoint(id: string) {
      s.deleteCheckpointFiles.run(id);
      s.deleteMetadata.run(id);
      s.keepRequest.run(id);
      s.deleteCheckpoint.run(id);
    },
    *sessionCheckpoints(userId: string, sessionId: string) {
      const rows = s.sessionCheckpoints.all(userId, sessionId) as CheckpointRow[];
      for (const row of rows) row.auto = Boolean(row.auto);
      return rows;
    },
    *orphanCheckpointIds(sessionId?: string) {
      return s.orphanCheckpoints.all({ sessionId: sessionId ?? null }) as string[];
    },
    *checkpointMetadataRows(cpSeq: number) {
      return s.metadataRows.all(cpSeq) as IndexedMetadataRow[];
    },
    *lastFilesPosition(branchId: string, from: number, upTo: number) {
      return (s.lastFilesPosition.get(branchId, from, upTo) as number | null) ?? undefined;
    },
    *isMovingFrom(checkpointId: string) {
      return s.movingFrom.get(checkpointId) !== undefined;
    },
    *deleteExpiredCheckpoints(now: number, sessionId?: string) {
      s.deleteExpiredFiles.run({ now, sessionId: sessionId ?? null });
      s.deleteExpiredMetadata.run({ now, sessionId: sessionId ?? null });
      s.keepExpiredRequests.run({ now, sessionId: sessionId ?? null });
      const rows = s.deleteExpired.all({ now, sessionId: sessionId ?? null }) as CheckpointRow[];
      s.deleteLapsedHolds.run({ sessionId: sessionId ?? null });
      for (const row of rows) row.auto = Boolean(row.auto);
      return rows;
    },
    *expireCheckpoints(expired: { id: string; checksum: string }[], at: number) {
      for (const { id, checksum } of expired) {
        s.keepRequest.run(id);
        s.expire.run(at, checksum, id);
      }
    },
    *liveCheckpointAt(userId: string, sessionId: string, now: number, offset: number) {
      return retentionRow(s.liveAt.get({ userId, sessionId, now, offset }));
    },
    *newestNamed(sessionId: string, name: string | null, now: number, beforeSeq: number) {
      const statement = name === null ? s.newestUnnamed : s.newestNamed;
      return retentionRow(statement.get({ sessionId, now, beforeSeq, ...(name === null ? {} : { name }) }));
    },
    *branchCheckpoints(branchId: string, auto: boolean, now: number, limit: number) {
      return s.branchKind.all({ branchId, auto: auto ? 1 : 0, now, limit }).map((r) => retentionRow(r)!);
    },
    *newestOnBranch(branchId: string, now: number, beforeSeq: number) {
      return retentionRow(s.newestOnBranch.get({ branchId, now, beforeSeq }));
    },
    *firstCheckpointSeq(userId: string, sessionId: string) {
      return s.firstSeq.get(userId, sessionId) as number | undefined;
    },
    *agedCheckpoints(sessionId: string, afterAt: number, cutoff: number, now: number, limit: number) {
      return s.aged.all({ sessionId, afterAt, cutoff, now, limit }).map((r) => retentionRow(r)!);
    },
    *checkpointInUse(sessionId: string, checkpointId: string) {
      return s.inUse.get({ sessionId, id: checkpointId }) !== undefined;
    },
    *holdCheckpoint(checkpointId: string, sessionId: string, holdMs: number) {
      s.hold.run(checkpointId, sessionId, holdMs);
    },
    *releaseCheckpoint(checkpointId: string) {
      s.release.run(checkpointId);
    },
    *checkpointStats(userId: string, sessionId: string, now: number) {
      return s.stats.all({ userId, sessionId, now }) as CheckpointNameStats[];
    },
  };
}
