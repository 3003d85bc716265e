// Branches, the entry log, tool completions and state snapshots: PostgreSQL's statements and the port's EntriesTx.
import type {
  BranchMove,
  BranchRow,
  EntriesTx,
  EntryRow,
  HeadRow,
  LineageSegment,
  MessageRow,
  NewEntry,
  SnapshotRow,
  SessionRow,
  ToolResultRow,
  ToolRow,
  VersionAnchor,
  VersionRow,
} from "../port/index.js";
import { messageFromTuple, type MessageTuple } from "../port/entries.js";
import { rootedLineage, type WalkedSegment } from "../port/rooted-lineage.js";
import {
  BRANCH_COLS,
  BRANCH_FIELDS,
  ENTRY_COLS,
  ENTRY_FIELDS,
  HEAD_COLS,
  HEAD_FIELDS,
  TOOL_COLS,
  TOOL_JOIN,
  headFromTuple,
  named,
  select,
  slice,
} from "./columns.js";
import { CURRENT_OF, EXPECT_CURRENT, copyOf, currentFromTuple } from "./current.js";
import { insertRow } from "./batch.js";
import type { Sql } from "./sql.js";

// Positions are int4; bounds may be Number.MAX_SAFE_INTEGER (a lineage's open end), so they are bound as int8.
const IN_SEGMENT = `branch_id = $1 AND position > $2::bigint AND position <= $3::bigint`;
const MESSAGE_COLS = `id, position, role, content, client_id, metadata, created_at`;

/** The ids of stored snapshots among some hashes. */
const SNAPSHOT_IDS = `SELECT hash, id FROM state_snapshots WHERE hash = ANY($1::text[])`;
/** Adds the ids of the stored snapshots among `hashes` to `ids`. */
function* snapshotIds(sql: Sql, ids: Map<string, number>, hashes: string[]) {
  for (const r of yield* sql.rows<{ hash: string; id: number }>(SNAPSHOT_IDS, [hashes])) ids.set(r.hash, r.id);
}
/** Snapshots an import stores per statement: bodies can be large, and a statement carries them all. */
const SNAPSHOT_CHUNK = 100;

/** The first message after `<t>.after` on `<t>.branch_id`, as a LATERAL subquery's body (no row when there is none). */
const NEXT_MESSAGE = (t: string, cols: string) =>
  `SELECT ${cols} FROM entries n WHERE n.branch_id = ${t}.branch_id AND n.position > ${t}.after AND n.kind = 'message'
    ORDER BY n.position LIMIT 1`;

/**
 * `s (of_id, branch_id, after)`: for each anchor `a (of_id, anchor_id)` (a message, or null: the session's start), every
 * branch whose lineage holds the anchor with the branch's own entries after `after` coming next: the anchor's own branch
 * after it, the branches forked at it, and, walking on, the branches forked at any entry before the next message (tool
 * calls and state changes in between). So each branch's first message after `after`, if any, is one whose nearest
 * message before it is the anchor. Each step is an index search from the row before it: the entries between the anchor
 * and the next message, and the branches forked there, by session and fork entry (the LATERAL subqueries, fenced with
 * OFFSET 0 so that the planner keeps them per row, never read a session's branches whole). `session` is its parameter.
 */
const following = (anchors: string, session: string) => `WITH RECURSIVE
  a (of_id, anchor_id) AS (${anchors}),
  s (of_id, branch_id, after) AS (
    SELECT a.of_id, e.branch_id, e.position FROM a
      CROSS JOIN LATERAL (SELECT e.branch_id, e.position FROM entries e WHERE e.id = a.anchor_id OFFSET 0) e
    UNION SELECT a.of_id, f.id, f.fork_position FROM a CROSS JOIN LATERAL (
        SELECT f.id, f.fork_position FROM branches f WHERE f.session_id = ${session} AND f.fork_entry_id = a.anchor_id
        UNION ALL SELECT z.id, 0 FROM branches z
          WHERE a.anchor_id IS NULL AND z.session_id = ${session} AND z.fork_entry_id IS NULL AND z.fork_position = 0) f
    UNION SELECT s.of_id, f.id, f.fork_position FROM s
      CROSS JOIN LATERAL (SELECT e.id FROM entries e WHERE e.branch_id = s.branch_id AND e.position > s.after
        AND e.position < coalesce((${NEXT_MESSAGE("s", "n.position")}), 2147483647) OFFSET 0) e
      CROSS JOIN LATERAL (SELECT f.id, f.fork_position FROM branches f
        WHERE f.session_id = ${session} AND f.fork_entry_id = e.id OFFSET 0) f)`;

/**
 * Not a message a failed guarded block (atomic) wrote: on the branch it ran on, one of the branch's own entries after
 * the block's checkpoint (where the branch continuing it forks) up to where the block left its head; on another branch
 * it continues (one the block made or moved to), one after that branch's head when the block first wrote there (rows
 * written before `continued_from`: one written after the checkpoint's entry), up to where the block left it too. Such
 * a message is no version of any other.
 */
// A scalar subquery, not NOT EXISTS: PostgreSQL would turn that into an anti join reading every branch of the database
// (a hash of both sides); this is one primary-key lookup per version.
const NOT_FAILED_BLOCK = (v: string) => `coalesce((SELECT ${v}.position <= fb.continued_at AND (
      (cb.parent_id = fb.id AND ${v}.position > cb.fork_position)
      OR (cb.parent_id IS DISTINCT FROM fb.id AND coalesce(${v}.position > fb.continued_from,
        ${v}.seq > coalesce((SELECT a.seq FROM entries a WHERE a.id = cb.fork_entry_id), 0))))
    FROM branches fb JOIN branches cb ON cb.id = fb.continued_by WHERE fb.id = ${v}.branch_id), false) = false`;

/**
 * A message's versions are the messages whose nearest message before them is the same message (its anchor; null:
 * none, the session's first messages), whatever tool calls and state changes come between: for each anchor, the first
 * message of each branch that `following` finds, oldest first. `$1` and `$3` are the messages' ids and their anchors'
 * (arrays of the same length), `$2` the session.
 */
export const MESSAGE_VERSIONS = `${following("SELECT * FROM unnest($1::text[], $3::text[])", "$2")}
  SELECT s.of_id AS "ofId", v.id AS id, v.branch_id AS "branchId"
  FROM s CROSS JOIN LATERAL (${NEXT_MESSAGE("s", "n.id, n.branch_id, n.seq, n.position")}) v
  WHERE ${NOT_FAILED_BLOCK("v")}
  ORDER BY s.of_id, v.seq`;

/** The versions that follow one anchor (`$2`, null: the session's start, of session `$1`), as whole messages, oldest first. */
export const VERSIONS_AFTER = `${following("SELECT NULL::text, $2::text", "$1")}
  SELECT v.id, v.branch_id AS "branchId", v.position, v.role, v.content, v.client_id AS "clientId", v.metadata,
    v.created_at AS "createdAt"
  FROM s CROSS JOIN LATERAL (${NEXT_MESSAGE("s", "n.*")}) v
  WHERE ${NOT_FAILED_BLOCK("v")}
  ORDER BY v.seq`;

/** The branches whose lineage's last message is `$2` (of session `$1`), oldest first. */
export const BRANCHES_ENDING_AT = `${following("SELECT NULL::text, $2::text", "$1")}
  SELECT ${named("b", BRANCH_FIELDS)} FROM s JOIN branches b ON b.id = s.branch_id
  WHERE NOT EXISTS (SELECT 1 FROM entries n WHERE n.branch_id = s.branch_id AND n.position > s.after AND n.kind = 'message')
  ORDER BY b.seq`;

const BRANCH_INSERT_COLS = [
  "id",
  "session_id",
  "parent_id",
  "fork_checkpoint_id",
  "fork_position",
  "fork_entry_id",
  "name",
  "reason",
  "created_at",
];
const INSERT_BRANCH = insertRow("branches", BRANCH_INSERT_COLS);
/** A branch with the move that makes it, above the session's newest move ($14: the session's id again). */
const INSERT_MOVED_BRANCH = insertRow(
  "branches",
  [...BRANCH_INSERT_COLS, "move_kind", "move_from_branch_id", "move_from_position", "move_to_position", "move_prev"],
  { expr: { move_prev: (p) => `(SELECT move_top FROM sessions WHERE id = ${p})` } },
);
/** Hashes are hex strings to the engine and 32-byte values in the table. */
const INSERT_ENTRY = insertRow(
  "entries",
  [
    "id",
    "branch_id",
    "position",
    "kind",
    "role",
    "content",
    "tool",
    "call_id",
    "client_id",
    "metadata",
    "state_id",
    "msg_count",
    "hash",
    "created_at",
    "reversible",
  ],
  { expr: { hash: (p) => `decode(${p}, 'hex')` } },
);
const INSERT_TOOL_RESULT = insertRow("tool_results", ["entry_id", "status", "result", "error", "hash", "completed_at"]);

/** This file's statements, named for the methods that run them. */
const s = {
  getBranch: `SELECT ${BRANCH_COLS} FROM branches WHERE id = $1`,
  listBranches: `SELECT ${BRANCH_COLS} FROM branches WHERE session_id = $1 ORDER BY seq`,
  branchesAtStart: `SELECT ${BRANCH_COLS} FROM branches WHERE session_id = $1 AND fork_position = 0 ORDER BY seq`,
  branchesForkedAtEntry: `SELECT ${BRANCH_COLS} FROM branches WHERE session_id = $1 AND fork_entry_id = $2 ORDER BY seq`,
  countBranchesForkedFrom: `SELECT count(*) FROM branches WHERE fork_checkpoint_id = $1`,
  countBranches: `SELECT count(*) FROM branches WHERE session_id = $1`,
  branchHeads: `SELECT b.id, (SELECT max(position) FROM entries WHERE branch_id = b.id) FROM branches b WHERE b.session_id = $1 ORDER BY b.seq`,
  getEntry: `SELECT ${ENTRY_COLS} FROM entries e WHERE e.id = $1`,
  entryWithBase: `SELECT ${select("e", ENTRY_FIELDS)}, ${select("b", BRANCH_FIELDS)}, ${select("f", HEAD_FIELDS)}
    FROM entries e JOIN branches b ON b.id = e.branch_id
    LEFT JOIN entries f ON e.position - 1 > b.fork_position AND f.branch_id = e.branch_id AND f.position = e.position - 1
    WHERE e.id = $1`,
  lastOwnEntry: `SELECT ${HEAD_COLS} FROM entries e WHERE e.branch_id = $1 ORDER BY e.position DESC LIMIT 1`,
  headPosition: `SELECT coalesce((SELECT position FROM entries WHERE branch_id = b.id ORDER BY position DESC LIMIT 1), b.fork_position)
    FROM branches b WHERE b.id = $1`,
  ownEntryAt: `SELECT ${ENTRY_COLS} FROM entries e WHERE e.branch_id = $1 AND e.position = $2::bigint`,
  // At most as deep as the session has branches (a damaged tree's cycle stops there); the walk's top names its parent.
  lineage: `WITH RECURSIVE lin(id, parent_id, fork_position, up_to, depth, lim) AS (
      SELECT id, parent_id, fork_position, $1::bigint, 0, (SELECT count(*) FROM branches c WHERE c.session_id = b0.session_id)
      FROM branches b0 WHERE id = $2
      UNION ALL
      SELECT b.id, b.parent_id, b.fork_position, LEAST(lin.up_to, lin.fork_position), lin.depth + 1, lin.lim
      FROM branches b JOIN lin ON b.id = lin.parent_id WHERE lin.depth + 1 < lin.lim)
    SELECT id AS "branchId", fork_position AS "after", up_to AS "upTo", parent_id AS "parentId" FROM lin ORDER BY depth DESC`,
  segmentEntries: `SELECT ${ENTRY_COLS} FROM entries e WHERE e.branch_id = $1 AND e.position > $2::bigint AND e.position <= $3::bigint ORDER BY e.position`,
  segmentMessages: `SELECT ${MESSAGE_COLS} FROM entries WHERE ${IN_SEGMENT} AND kind = 'message' ORDER BY position`,
  lastSegmentMessage: `SELECT ${MESSAGE_COLS} FROM entries WHERE ${IN_SEGMENT} AND kind = 'message' ORDER BY position DESC LIMIT 1`,
  lastSegmentMessages: `SELECT ${MESSAGE_COLS} FROM entries WHERE ${IN_SEGMENT} AND kind = 'message' ORDER BY position DESC LIMIT $4`,
  setBranchName: `UPDATE branches SET name = $1 WHERE id = $2`,
  segmentTools: `SELECT ${TOOL_COLS} FROM ${TOOL_JOIN}
    WHERE e.branch_id = $1 AND e.position > $2::bigint AND e.position <= $3::bigint AND e.kind = 'tool' ORDER BY e.position`,
  unappliedTools: `SELECT e.id FROM entries e JOIN tool_results r ON r.entry_id = e.id
    WHERE e.branch_id = $1 AND e.position > $2::bigint AND e.position <= $3::bigint AND e.kind = 'tool' AND r.status = 'succeeded'
    AND NOT EXISTS (SELECT 1 FROM applied a WHERE a.entry_id = e.id) AND NOT EXISTS (SELECT 1 FROM imported_calls i WHERE i.entry_id = e.id)
    ORDER BY e.position`,
  getTool: `SELECT ${TOOL_COLS} FROM ${TOOL_JOIN} WHERE e.id = $1 AND e.kind = 'tool'`,
  runningTools: `SELECT ${TOOL_COLS} FROM ${TOOL_JOIN} WHERE e.kind = 'tool' AND r.entry_id IS NULL ORDER BY e.seq`,
  putSnapshot: `INSERT INTO state_snapshots (hash, body, version) VALUES ($1, $2, $3) ON CONFLICT (hash) DO NOTHING RETURNING id`,
  putSnapshots: `INSERT INTO state_snapshots (hash, body, version) SELECT * FROM unnest($1::text[], $2::text[], $3::int[])
      ON CONFLICT (hash) DO NOTHING RETURNING hash, id`,
  getSnapshot: `SELECT hash, body, version FROM state_snapshots WHERE id = $1`,
  deleteUnreferencedSnapshots: `DELETE FROM state_snapshots s
    WHERE NOT EXISTS (SELECT 1 FROM entries e WHERE e.state_id = s.id)
      AND NOT EXISTS (SELECT 1 FROM checkpoints c WHERE c.state_id = s.id)`,
};

export function entriesTx(sql: Sql): EntriesTx {
  return {
    *insertBranch(r: BranchRow, move?: BranchMove) {
      const row = [r.id, r.sessionId, r.parentId, r.forkCheckpointId, r.forkPosition, r.forkEntryId, r.name, r.reason, r.createdAt];
      if (!move) yield* sql.later(INSERT_BRANCH, row);
      // The move that makes the branch, on its row, above the session's newest move (which `recordMove` makes it).
      else yield* sql.later(INSERT_MOVED_BRANCH, [...row, move.kind, move.fromBranchId, move.fromPosition, move.toPosition, r.sessionId]);
    },
    *getBranch(id: string) {
      return yield* sql.one<BranchRow>(s.getBranch, [id]);
    },
    *listBranches(sessionId: string) {
      return yield* sql.rows<BranchRow>(s.listBranches, [sessionId]);
    },
    *branchesForkedAt(sessionId: string, forkEntryId: string | null) {
      return forkEntryId === null
        ? yield* sql.rows<BranchRow>(s.branchesAtStart, [sessionId])
        : yield* sql.rows<BranchRow>(s.branchesForkedAtEntry, [sessionId, forkEntryId]);
    },
    *branchesEndingAt(sessionId: string, messageId: string) {
      return yield* sql.rows<BranchRow>(BRANCHES_ENDING_AT, [sessionId, messageId]);
    },
    *countBranchesForkedFrom(checkpointId: string) {
      return (yield* sql.column<number>(s.countBranchesForkedFrom, [checkpointId]))[0]!;
    },
    *countBranches(sessionId: string) {
      return (yield* sql.column<number>(s.countBranches, [sessionId]))[0]!;
    },
    *branchHeads(sessionId: string) {
      const rows = yield* sql.tuples<[string, number | null]>(s.branchHeads, [sessionId]);
      return new Map(rows.map(([id, head]) => [id, head ?? 0]));
    },

    *insertEntry(r: NewEntry) {
      yield* sql.later(
        INSERT_ENTRY,
        [
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
          r.reversible ?? null,
        ],
        true,
      );
      sql.wroteEntry(r.branchId, {
        id: r.id,
        position: r.position,
        hash: r.hash,
        stateId: r.stateId,
        msgCount: r.msgCount,
        createdAt: r.createdAt,
      });
    },
    *getEntry(id: string) {
      return yield* sql.one<EntryRow>(s.getEntry, [id]);
    },
    *entryWithBase(id: string) {
      const [t] = yield* sql.tuples(s.entryWithBase, [id]);
      if (!t) return undefined;
      const b = ENTRY_FIELDS.length;
      return {
        entry: slice<EntryRow>(t, 0, ENTRY_FIELDS)!,
        branch: slice<BranchRow>(t, b, BRANCH_FIELDS)!,
        base: slice<HeadRow>(t, b + BRANCH_FIELDS.length, HEAD_FIELDS),
      };
    },
    *lastOwnEntry(branchId: string) {
      const [t] = yield* sql.tuples(s.lastOwnEntry, [branchId]);
      return t && headFromTuple(t, 0);
    },
    *headPosition(branchId: string) {
      const [position] = yield* sql.column<number>(s.headPosition, [branchId]);
      return position;
    },
    *currentOf(sessionId: string) {
      const known = sql.current.get(sessionId);
      if (known && !known.contested && sql.speculates) {
        // Checked by the server ahead of the unit's writes, in their round trip; a copy, as a read returns.
        const { last, session } = known.row;
        yield* sql.later(
          EXPECT_CURRENT,
          [sessionId, known.stamp, last?.id ?? null, session.lastCheckpointAt ?? 0, session.moving === true],
          true,
        );
        sql.see(sessionId, known, true);
        return copyOf(known.row);
      }
      const [t] = yield* sql.tuples(CURRENT_OF, [sessionId]);
      if (!t) return undefined;
      const { row, stamp } = currentFromTuple(t);
      const { session } = row;
      // Contested until a read finds the session as this server last wrote it.
      const contested =
        known?.contested === true &&
        (known.stamp !== stamp ||
          known.row.last?.id !== row.last?.id ||
          known.row.session.lastCheckpointAt !== session.lastCheckpointAt ||
          known.row.session.moving !== session.moving);
      sql.see(sessionId, { row: copyOf(row), stamp, contested }, false);
      return row;
    },
    *ownEntryAt(branchId: string, position: number) {
      return yield* sql.one<EntryRow>(s.ownEntryAt, [branchId, position]);
    },
    *lineage(branchId: string, upTo?: number) {
      return rootedLineage(branchId, yield* sql.rows<WalkedSegment>(s.lineage, [upTo ?? Number.MAX_SAFE_INTEGER, branchId]));
    },
    *segmentEntries(segment: LineageSegment) {
      if (segment.upTo <= segment.after) return [];
      return yield* sql.rows<EntryRow>(s.segmentEntries, [segment.branchId, segment.after, segment.upTo]);
    },
    *segmentMessages<T>(segment: LineageSegment, map: (row: MessageRow) => T, out: T[]) {
      if (segment.upTo <= segment.after) return;
      const rows = yield* sql.tuples<MessageTuple>(s.segmentMessages, [segment.branchId, segment.after, segment.upTo]);
      for (const r of rows) out.push(map(messageFromTuple(segment.branchId, r)));
    },
    *lastSegmentMessage(segment: LineageSegment) {
      if (segment.upTo <= segment.after) return undefined;
      const [r] = yield* sql.tuples<MessageTuple>(s.lastSegmentMessage, [segment.branchId, segment.after, segment.upTo]);
      return r && messageFromTuple(segment.branchId, r);
    },

    *lastSegmentMessages(segment: LineageSegment, limit: number) {
      if (segment.upTo <= segment.after || limit <= 0) return [];
      const rows = yield* sql.tuples<MessageTuple>(s.lastSegmentMessages, [segment.branchId, segment.after, segment.upTo, limit]);
      return rows.reverse().map((r) => messageFromTuple(segment.branchId, r));
    },
    *messageVersions(sessionId: string, anchors: readonly VersionAnchor[]) {
      if (anchors.length === 0) return [];
      return yield* sql.rows<VersionRow>(MESSAGE_VERSIONS, [anchors.map((a) => a.ofId), sessionId, anchors.map((a) => a.anchorId)]);
    },
    *versionsAfter(sessionId: string, anchorId: string | null) {
      return yield* sql.rows<MessageRow>(VERSIONS_AFTER, [sessionId, anchorId]);
    },
    *setBranchName(branchId: string, name: string | null) {
      yield* sql.exec(s.setBranchName, [name, branchId]);
    },
    *segmentTools(segment: LineageSegment) {
      if (segment.upTo <= segment.after) return [];
      return yield* sql.rows<ToolRow>(s.segmentTools, [segment.branchId, segment.after, segment.upTo]);
    },
    *unappliedTools(segment: LineageSegment) {
      if (segment.upTo <= segment.after) return [];
      return yield* sql.column<string>(s.unappliedTools, [segment.branchId, segment.after, segment.upTo]);
    },
    *getTool(entryId: string) {
      return yield* sql.one<ToolRow>(s.getTool, [entryId]);
    },
    *runningTools() {
      return yield* sql.rows<ToolRow>(s.runningTools);
    },
    *insertToolResult(r: ToolResultRow) {
      yield* sql.later(INSERT_TOOL_RESULT, [r.entryId, r.status, r.result, r.error, r.hash, r.completedAt]);
    },

    *putSnapshot(hash: string, body: string, version = 1) {
      // Looked up first (a stored one is the common case, and ids are not drawn in vain); writers of several sessions run
      // at once here, so the unique index decides, and a row committed meanwhile is read by a statement of its own.
      const select = `SELECT id FROM state_snapshots WHERE hash = $1`;
      const [known] = yield* sql.column<number>(select, [hash]);
      if (known !== undefined) return known;
      const [id] = yield* sql.column<number>(s.putSnapshot, [hash, body, version]);
      return id ?? (yield* sql.column<number>(select, [hash]))[0]!;
    },
    *putSnapshots(items: readonly { hash: string; body: string; version: number }[]) {
      // Three statements a chunk whatever its size: the stored ones, the others inserted, any committed meanwhile.
      const ids = new Map<string, number>();
      for (let at = 0; at < items.length; at += SNAPSHOT_CHUNK) {
        const chunk = items.slice(at, at + SNAPSHOT_CHUNK);
        yield* snapshotIds(
          sql,
          ids,
          chunk.map((i) => i.hash),
        );
        const missing = chunk.filter((i) => !ids.has(i.hash));
        if (missing.length === 0) continue;
        const inserted = yield* sql.rows<{ hash: string; id: number }>(s.putSnapshots, [
          missing.map((i) => i.hash),
          missing.map((i) => i.body),
          missing.map((i) => i.version),
        ]);
        for (const r of inserted) ids.set(r.hash, r.id);
        const raced = missing.filter((i) => !ids.has(i.hash)).map((i) => i.hash);
        if (raced.length > 0) yield* snapshotIds(sql, ids, raced);
      }
      return ids;
    },
    *getSnapshot(id: number) {
      return yield* sql.one<SnapshotRow>(s.getSnapshot, [id]);
    },
    *deleteUnreferencedSnapshots() {
      return yield* sql.exec(s.deleteUnreferencedSnapshots);
    },
  };
}
