// Branches, the entry log, tool completions and state snapshots: SQLite's statements and the port's EntriesTx.
import type Database from "better-sqlite3";
import type {
  BranchMove,
  BranchRow,
  EntriesTx,
  EntryRow,
  LineageSegment,
  MessageRow,
  NewEntry,
  SnapshotRow,
  ToolResultRow,
  VersionAnchor,
  VersionRow,
} from "../port/index.js";
import { messageFromTuple, type MessageTuple } from "../port/entries.js";
import { rootedLineage, type WalkedSegment } from "../port/rooted-lineage.js";
import {
  BRANCH_COLS,
  BRANCH_FIELDS,
  type CurrentTuple,
  ENTRY_COLS,
  ENTRY_FIELDS,
  type EntryTuple,
  HEAD_COLS,
  HEAD_FIELDS,
  type HeadTuple,
  TOOL_COLS,
  TOOL_JOIN,
  headFromTuple,
  named,
  select,
  slice,
  toolRows,
  LAST_CHECKPOINT_AT,
  MOVING,
} from "./columns.js";
import { prepare, type RowMode } from "./object-rows.js";

/** The position of the first message after `<t>.after` on `<t>.branch_id` (the largest integer when there is none). */
const NEXT_MESSAGE = (t: string) =>
  `coalesce((SELECT n.position FROM entries n WHERE n.branch_id = ${t}.branch_id AND n.position > ${t}.after AND n.kind = 'message'
    ORDER BY n.position LIMIT 1), 9223372036854775807)`;

/**
 * `s (of_id, branch_id, after)`: for each anchor `a (of_id, anchor_id)` (a message, or null: the session's start), every
 * branch whose lineage holds the anchor with the branch's own entries after `after` coming next: the anchor's own branch
 * after it, the branches forked at it, and, walking on, the branches forked at any entry before the next message (tool
 * calls and state changes in between). So each branch's first message after `after`, if any, is one whose nearest
 * message before it is the anchor. CROSS JOINs keep the order of the index searches (from the anchors outwards); a
 * search costs the entries between the anchor and the next message, and the branches forked there.
 */
const following = (anchors: string) => `WITH RECURSIVE
  a (of_id, anchor_id) AS (${anchors}),
  s (of_id, branch_id, after) AS (
    SELECT a.of_id, e.branch_id, e.position FROM a CROSS JOIN entries e ON e.id = a.anchor_id
    UNION SELECT a.of_id, f.id, f.fork_position FROM a CROSS JOIN branches f ON f.session_id = @session AND f.fork_entry_id = a.anchor_id
    UNION SELECT a.of_id, z.id, 0 FROM a CROSS JOIN branches z
      ON a.anchor_id IS NULL AND z.session_id = @session AND z.fork_entry_id IS NULL AND z.fork_position = 0
    UNION SELECT s.of_id, f.id, f.fork_position FROM s
      CROSS JOIN entries e ON e.branch_id = s.branch_id AND e.position > s.after AND e.position < ${NEXT_MESSAGE("s")}
      CROSS JOIN branches f ON f.session_id = @session AND f.fork_entry_id = e.id)`;

/**
 * Not a message a failed guarded block (atomic) wrote: on the branch it ran on, one of the branch's own entries after
 * the block's checkpoint (where the branch continuing it forks) up to where the block left its head; on another branch
 * it continues (one the block made or moved to), one after that branch's head when the block first wrote there (rows
 * written before `continued_from`: one written after the checkpoint's entry), up to where the block left it too. Such
 * a message is no version of any other.
 */
const NOT_FAILED_BLOCK = (v: string) => `NOT EXISTS (SELECT 1 FROM branches fb JOIN branches cb ON cb.id = fb.continued_by
    WHERE fb.id = ${v}.branch_id AND ${v}.position <= fb.continued_at AND (
      (cb.parent_id = fb.id AND ${v}.position > cb.fork_position)
      OR (cb.parent_id IS NOT fb.id AND coalesce(${v}.position > fb.continued_from,
        ${v}.seq > coalesce((SELECT a.seq FROM entries a WHERE a.id = cb.fork_entry_id), 0)))))`;

/**
 * A message's versions are the messages whose nearest message before them is the same message (`anchor_id`; null: none,
 * the session's first messages), whatever tool calls and state changes come between: for each anchor, the first
 * message of each branch that `following` finds, oldest first. `@anchors` is a JSON array of `[of_id, anchor_id]`.
 */
export const MESSAGE_VERSIONS = `${following("SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(@anchors)")}
  SELECT s.of_id AS ofId, v.id AS id, v.branch_id AS branchId
  FROM s CROSS JOIN entries v ON v.branch_id = s.branch_id AND v.position = ${NEXT_MESSAGE("s")}
  WHERE ${NOT_FAILED_BLOCK("v")}
  ORDER BY s.of_id, v.seq`;

/** The versions that follow one anchor (`@anchor`, null: the session's start), as whole messages, oldest first. */
export const VERSIONS_AFTER = `${following("SELECT NULL, @anchor")}
  SELECT v.id AS id, v.branch_id AS branchId, v.position AS position, v.role AS role, v.content AS content,
    v.client_id AS clientId, v.metadata AS metadata, v.created_at AS createdAt
  FROM s CROSS JOIN entries v ON v.branch_id = s.branch_id AND v.position = ${NEXT_MESSAGE("s")}
  WHERE ${NOT_FAILED_BLOCK("v")}
  ORDER BY v.seq`;

/** The branches whose lineage's last message is `@message` (of session `@session`), oldest first. */
export const BRANCHES_ENDING_AT = `${following("SELECT NULL, @message")}
  SELECT ${named("b", BRANCH_FIELDS)} FROM s CROSS JOIN branches b ON b.id = s.branch_id
  WHERE NOT EXISTS (SELECT 1 FROM entries n WHERE n.branch_id = s.branch_id AND n.position > s.after AND n.kind = 'message')
  ORDER BY b.seq`;

export function entriesTx(db: Database.Database): EntriesTx {
  const p = (sql: string, mode?: RowMode) => prepare(db, sql, mode);
  const s = {
    // The hot inserts bind by position: a third faster than binding by name from an object.
    insertBranch:
      p(`INSERT INTO branches (id, session_id, parent_id, fork_checkpoint_id, fork_position, fork_entry_id, name, reason, created_at)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`),
    // The move that makes the branch, on its row, above the session's newest move (which `recordMove` makes it).
    insertMovedBranch:
      p(`INSERT INTO branches (id, session_id, parent_id, fork_checkpoint_id, fork_position, fork_entry_id, name, reason, created_at,
      move_kind, move_from_branch_id, move_from_position, move_to_position, move_prev)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT move_top FROM sessions WHERE id = ?))`),
    getBranch: p(`SELECT ${BRANCH_COLS} FROM branches WHERE id = ?`),
    listBranches: p(`SELECT ${BRANCH_COLS} FROM branches WHERE session_id = ? ORDER BY seq`),
    forkedAtZero: p(`SELECT ${BRANCH_COLS} FROM branches WHERE session_id = ? AND fork_position = 0 ORDER BY seq`),
    forkedAt: p(`SELECT ${BRANCH_COLS} FROM branches WHERE session_id = ? AND fork_entry_id = ? ORDER BY seq`),
    endingAt: p(BRANCHES_ENDING_AT),
    countForkedFrom: p(`SELECT count(*) AS n FROM branches WHERE fork_checkpoint_id = ?`),
    countBranches: p(`SELECT count(*) FROM branches WHERE session_id = ?`, "pluck"),
    branchHeads: p(
      `SELECT b.id AS id, (SELECT max(position) FROM entries WHERE branch_id = b.id) AS head FROM branches b WHERE b.session_id = ?`,
    ),
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
    headPosition: p(
      `SELECT coalesce((SELECT position FROM entries WHERE branch_id = b.id ORDER BY position DESC LIMIT 1), b.fork_position)
      FROM branches b WHERE b.id = ?`,
      "pluck",
    ),
    currentOf: p(
      `SELECT s.seq, s.id, s.user_id, s.title, s.metadata, s.current_branch_id, s.origin_session_id, s.origin_checkpoint_id,
      s.has_tools, s.created_at, s.updated_at,
      b.session_id, b.parent_id, b.fork_checkpoint_id, b.fork_position, b.fork_entry_id, b.name, b.reason, b.created_at,
      ${HEAD_COLS}, s.has_workspace, s.retention, s.retention_aged_at,
      -- In the same statement: a checkpoint the unit writes is never before the session's newest (lastCheckpointAt).
      ${LAST_CHECKPOINT_AT("s.user_id", "s.id")}, ${MOVING}
    FROM sessions s JOIN branches b ON b.id = s.current_branch_id
    LEFT JOIN entries e ON e.branch_id = b.id AND e.position = (SELECT max(position) FROM entries WHERE branch_id = b.id)
    WHERE s.id = ?`,
      "raw",
    ),
    ownAt: p(`SELECT ${ENTRY_COLS} FROM entries e WHERE e.branch_id = ? AND e.position = ?`),
    // At most as deep as the session has branches (a damaged tree's cycle stops there); the walk's top names its parent.
    lineage: p(`WITH RECURSIVE lin(id, parent_id, fork_position, up_to, depth, lim) AS (
      SELECT id, parent_id, fork_position, ?, 0, (SELECT count(*) FROM branches c WHERE c.session_id = b0.session_id)
      FROM branches b0 WHERE id = ?
      UNION ALL
      SELECT b.id, b.parent_id, b.fork_position, MIN(lin.up_to, lin.fork_position), lin.depth + 1, lin.lim
      FROM branches b JOIN lin ON b.id = lin.parent_id WHERE lin.depth + 1 < lin.lim)
    SELECT id AS branchId, fork_position AS after, up_to AS upTo, parent_id AS parentId FROM lin ORDER BY depth DESC`),
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
    lastSegmentMessages: p(
      `SELECT id, position, role, content, client_id, metadata, created_at
    FROM entries WHERE branch_id = ? AND position > ? AND position <= ? AND kind = 'message' ORDER BY position DESC LIMIT ?`,
      "raw",
    ),
    messageVersions: p(MESSAGE_VERSIONS),
    versionsAfter: p(VERSIONS_AFTER),
    setBranchName: p(`UPDATE branches SET name = ? WHERE id = ?`),
    segmentTools: p(
      `SELECT ${TOOL_COLS} FROM ${TOOL_JOIN} WHERE e.branch_id = ? AND e.position > ? AND e.position <= ? AND e.kind = 'tool' ORDER BY e.position`,
    ),
    getTool: p(`SELECT ${TOOL_COLS} FROM ${TOOL_JOIN} WHERE e.id = ? AND e.kind = 'tool'`),
    unappliedTools: p(
      `SELECT e.id FROM entries e JOIN tool_results r ON r.entry_id = e.id WHERE e.branch_id = ? AND e.position > ? AND e.position <= ?
      AND e.kind = 'tool' AND r.status = 'succeeded' AND NOT EXISTS (SELECT 1 FROM applied a WHERE a.entry_id = e.id)
      AND NOT EXISTS (SELECT 1 FROM imported_calls i WHERE i.entry_id = e.id) ORDER BY e.position`,
      "pluck",
    ),
    runningTools: p(`SELECT ${TOOL_COLS} FROM ${TOOL_JOIN} WHERE e.kind = 'tool' AND r.entry_id IS NULL ORDER BY e.seq`),
    insertToolResult: p(
      `INSERT INTO tool_results (entry_id, status, result, error, hash, completed_at) VALUES (@entryId, @status, @result, @error, @hash, @completedAt)`,
    ),
    snapshotId: p(`SELECT id FROM state_snapshots WHERE hash = ?`),
    insertSnapshot: p(`INSERT INTO state_snapshots (hash, body, version) VALUES (?, ?, ?)`),
    getSnapshot: p(`SELECT hash, body, version FROM state_snapshots WHERE id = ?`),
    deleteUnreferencedSnapshots: p(`DELETE FROM state_snapshots
    WHERE id NOT IN (SELECT state_id FROM entries WHERE state_id IS NOT NULL)
      AND id NOT IN (SELECT state_id FROM checkpoints WHERE state_id IS NOT NULL)`),
  };
  // Writes are serialized on SQLite: the lookup cannot race another insert (the unique index backs it up).
  const putSnapshot = (hash: string, body: string, version: number) => {
    const known = s.snapshotId.get(hash) as { id: number } | undefined;
    return known ? known.id : Number(s.insertSnapshot.run(hash, body, version).lastInsertRowid);
  };
  return {
    *insertBranch(r: BranchRow, move?: BranchMove) {
      const row = [r.id, r.sessionId, r.parentId, r.forkCheckpointId, r.forkPosition, r.forkEntryId, r.name, r.reason, r.createdAt];
      if (!move) s.insertBranch.run(...row);
      else s.insertMovedBranch.run(...row, move.kind, move.fromBranchId, move.fromPosition, move.toPosition, r.sessionId);
    },
    *getBranch(id: string) {
      return s.getBranch.get(id) as BranchRow | undefined;
    },
    *listBranches(sessionId: string) {
      return s.listBranches.all(sessionId) as BranchRow[];
    },
    *branchesForkedAt(sessionId: string, forkEntryId: string | null) {
      return (forkEntryId === null ? s.forkedAtZero.all(sessionId) : s.forkedAt.all(sessionId, forkEntryId)) as BranchRow[];
    },
    *branchesEndingAt(sessionId: string, messageId: string) {
      return s.endingAt.all({ session: sessionId, message: messageId }) as BranchRow[];
    },
    *countBranchesForkedFrom(checkpointId: string) {
      return (s.countForkedFrom.get(checkpointId) as { n: number }).n;
    },

    *countBranches(sessionId: string) {
      return s.countBranches.get(sessionId) as number;
    },
    *branchHeads(sessionId: string) {
      const rows = s.branchHeads.all(sessionId) as { id: string; head: number | null }[];
      return new Map(rows.map((r) => [r.id, r.head ?? 0]));
    },

    *insertEntry(r: NewEntry) {
      // Hashes are hex strings to the engine and 32-byte blobs on disk.
      const reversible = r.reversible === undefined || r.reversible === null ? null : r.reversible ? 1 : 0;
      s.insertEntry.run(
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
    },
    *getEntry(id: string) {
      return s.getEntry.get(id) as EntryRow | undefined;
    },
    *entryWithBase(id: string) {
      const t = s.entryWithBase.get(id) as unknown[] | undefined;
      if (!t) return undefined;
      const b = ENTRY_FIELDS.length;
      return {
        entry: slice(t, 0, ENTRY_FIELDS)!,
        branch: slice(t, b, BRANCH_FIELDS)!,
        base: slice(t, b + BRANCH_FIELDS.length, HEAD_FIELDS),
      };
    },
    *lastOwnEntry(branchId: string) {
      const t = s.lastOwn.get(branchId) as HeadTuple | undefined;
      return t && headFromTuple(t, 0);
    },
    *headPosition(branchId: string) {
      return s.headPosition.get(branchId) as number | undefined;
    },
    *currentOf(sessionId: string) {
      const t = s.currentOf.get(sessionId) as CurrentTuple | undefined;
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
          hasWorkspace: t[25] === 1,
          retention: t[26],
          retentionAgedAt: t[27],
          createdAt: t[9],
          updatedAt: t[10],
          lastCheckpointAt: t[28],
          moving: t[29] === 1,
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
    },
    *ownEntryAt(branchId: string, position: number) {
      return s.ownAt.get(branchId, position) as EntryRow | undefined;
    },
    *lineage(branchId: string, upTo?: number) {
      return rootedLineage(branchId, s.lineage.all(upTo ?? Number.MAX_SAFE_INTEGER, branchId) as WalkedSegment[]);
    },
    *segmentEntries(segment: LineageSegment) {
      if (segment.upTo <= segment.after) return [];
      const branchId = segment.branchId;
      return (s.segment.all(branchId, segment.after, segment.upTo) as EntryTuple[]).map((t) => ({
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
    },
    *segmentMessages<T>(segment: LineageSegment, map: (row: MessageRow) => T, out: T[]) {
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
      for (const r of s.segmentMessages.all(segment.branchId, segment.after, segment.upTo) as MessageTuple[]) {
        row.id = r[0];
        row.position = r[1];
        row.role = r[2];
        row.content = r[3];
        row.clientId = r[4];
        row.metadata = r[5];
        row.createdAt = r[6];
        out.push(map(row));
      }
    },
    *lastSegmentMessage(segment: LineageSegment) {
      if (segment.upTo <= segment.after) return undefined;
      const r = s.lastSegmentMessage.get(segment.branchId, segment.after, segment.upTo) as MessageTuple | undefined;
      return r && messageFromTuple(segment.branchId, r);
    },
    *lastSegmentMessages(segment: LineageSegment, limit: number) {
      if (segment.upTo <= segment.after || limit <= 0) return [];
      const rows = s.lastSegmentMessages.all(segment.branchId, segment.after, segment.upTo, limit) as MessageTuple[];
      return rows.reverse().map((r) => messageFromTuple(segment.branchId, r));
    },
    *messageVersions(sessionId: string, anchors: readonly VersionAnchor[]) {
      if (anchors.length === 0) return [];
      const list = JSON.stringify(anchors.map((a) => [a.ofId, a.anchorId]));
      return s.messageVersions.all({ anchors: list, session: sessionId }) as VersionRow[];
    },
    *versionsAfter(sessionId: string, anchorId: string | null) {
      return s.versionsAfter.all({ anchor: anchorId, session: sessionId }) as MessageRow[];
    },
    *setBranchName(branchId: string, name: string | null) {
      s.setBranchName.run(name, branchId);
    },
    *segmentTools(segment: LineageSegment) {
      if (segment.upTo <= segment.after) return [];
      return toolRows(s.segmentTools.all(segment.branchId, segment.after, segment.upTo));
    },
    *unappliedTools(segment: LineageSegment) {
      if (segment.upTo <= segment.after) return [];
      return s.unappliedTools.all(segment.branchId, segment.after, segment.upTo) as string[];
    },
    *getTool(entryId: string) {
      const row = s.getTool.get(entryId);
      return row === undefined ? undefined : toolRows([row])[0];
    },
    *runningTools() {
      return toolRows(s.runningTools.all());
    },
    *insertToolResult(row: ToolResultRow) {
      s.insertToolResult.run(row);
    },

    *putSnapshot(hash: string, body: string, version = 1) {
      return putSnapshot(hash, body, version);
    },
    *putSnapshots(items: readonly { hash: string; body: string; version: number }[]) {
      const ids = new Map<string, number>();
      for (const { hash, body, version } of items) ids.set(hash, putSnapshot(hash, body, version));
      return ids;
    },
    *getSnapshot(id: number) {
      return s.getSnapshot.get(id) as SnapshotRow | undefined;
    },

    *deleteUnreferencedSnapshots() {
      return s.deleteUnreferencedSnapshots.run().changes;
    },
  };
}
