// Branches, the entry log (messages, state changes, tool calls), tool completions and state snapshots.
import type { SessionRow } from "./sessions.js";
import type { Step } from "./unit.js";

export interface BranchRow {
  id: string;
  sessionId: string;
  parentId: string | null;
  forkCheckpointId: string | null;
  forkPosition: number;
  forkEntryId: string | null;
  name: string | null;
  reason: string;
  createdAt: number;
}

/** A move (rollback, edit) recorded on the branch it makes, written with it: no row of its own (see MovesTx). */
export interface BranchMove {
  kind: string;
  fromBranchId: string;
  fromPosition: number;
  toPosition: number;
}

export type EntryKind = "message" | "state" | "tool";

export interface EntryRow {
  seq: number;
  id: string;
  branchId: string;
  position: number;
  kind: EntryKind;
  role: string | null;
  content: string | null;
  tool: string | null;
  callId: string | null;
  clientId: string | null;
  metadata: string | null;
  stateId: number | null;
  msgCount: number;
  hash: string;
  createdAt: number;
  /**
   * Tool entries: whether the tool had an `undo` when the call was journaled; null when not known (recorded before
   * this was kept, imported, or a recorded call of a tool not registered). Written with the entry; not hashed.
   * Read only with a tool's other fields (`ToolRow`).
   */
  reversible?: boolean | null;
}

/** An entry to insert (its `seq` is assigned by the store). */
export type NewEntry = Omit<EntryRow, "seq">;

/** What a lineage's head needs of its last entry (no content: heads are read on every write). */
export type HeadRow = Pick<EntryRow, "id" | "position" | "hash" | "stateId" | "msgCount" | "createdAt">;

/** The columns a message needs: what history reads. */
export type MessageRow = Pick<EntryRow, "id" | "branchId" | "position" | "role" | "content" | "clientId" | "metadata" | "createdAt">;

/** A message as both stores select it for the history reads: id, position, role, content, client_id, metadata, created_at. */
export type MessageTuple = [string, number, string, string, string | null, string | null, number];

/** A `MessageTuple` of `branchId`'s segment, as the port's row. */
export const messageFromTuple = (branchId: string, r: MessageTuple): MessageRow => ({
  id: r[0],
  branchId,
  position: r[1],
  role: r[2],
  content: r[3],
  clientId: r[4],
  metadata: r[5],
  createdAt: r[6],
});

/** A session, its current branch and that branch's last own entry: where every write to a session starts. */
export interface CurrentRow {
  session: SessionRow;
  branch: BranchRow;
  last: HeadRow | undefined;
  /**
   * While the branch has no entry of its own: its fork entry, where a store reads it in the same lookup (on a network
   * that saves a round trip). Undefined otherwise; the engine then reads the fork entry itself.
   */
  base?: HeadRow;
}

/** A message entry with its branch and the head of the branch's own entry before it (absent at the fork). */
export interface EntryBaseRow {
  entry: EntryRow;
  branch: BranchRow;
  base: HeadRow | undefined;
}

/** A piece of a lineage: entries of `branchId` with `after < position <= upTo`. Root first. */
export interface LineageSegment {
  branchId: string;
  after: number;
  upTo: number;
}

/** A tool entry joined with its completion and whether it is applied in the world. */
export interface ToolRow extends EntryRow {
  reversible: boolean | null;
  status: "succeeded" | "failed" | null;
  result: string | null;
  error: string | null;
  resultHash: string | null;
  completedAt: number | null;
  /** Non-null when applied: the result of its latest application. */
  appliedResult: string | null;
  appliedSeq: number | null;
}

export interface ToolResultRow {
  entryId: string;
  status: "succeeded" | "failed";
  result: string | null;
  error: string | null;
  hash: string;
  completedAt: number;
}

/** One version of a message: a message whose nearest message before it is the same message as that message's. */
/** A message whose versions are asked for (`ofId`), and the nearest message before it (`anchorId`; null: none). */
export interface VersionAnchor {
  ofId: string;
  anchorId: string | null;
}

export interface VersionRow {
  /** The message whose versions these are. */
  ofId: string;
  id: string;
  branchId: string;
}

export interface SnapshotRow {
  hash: string;
  body: string;
  /** The state schema version the body was written under (1 for states written before versions existed). */
  version: number;
}

export interface EntriesTx {
  /** Inserts a branch; with `move`, the move that makes it, recorded on it above the session's newest (see `recordMove`). */
  insertBranch(row: BranchRow, move?: BranchMove): Step<void>;
  getBranch(id: string): Step<BranchRow | undefined>;
  listBranches(sessionId: string): Step<BranchRow[]>;
  /** Branches whose base is `forkEntryId` (null: branches of the session starting at position 0). */
  branchesForkedAt(sessionId: string, forkEntryId: string | null): Step<BranchRow[]>;
  /**
   * The session's branches whose lineage's last message is `messageId` (entries after it that are not messages are
   * theirs too), oldest first: where messages that follow it land when the session has moved on.
   */
  branchesEndingAt(sessionId: string, messageId: string): Step<BranchRow[]>;
  /** Number of branches that fork at this checkpoint. */
  countBranchesForkedFrom(checkpointId: string): Step<number>;
  /** How many branches the session has, the root included. */
  countBranches(sessionId: string): Step<number>;
  /** The highest position of each branch of a session (0 for a branch with no entry of its own). */
  branchHeads(sessionId: string): Step<Map<string, number>>;

  insertEntry(row: NewEntry): Step<void>;
  getEntry(id: string): Step<EntryRow | undefined>;
  /** An entry with its branch and the head before it, in one lookup (what an edit forks from). */
  entryWithBase(id: string): Step<EntryBaseRow | undefined>;
  /** The branch's own entry with the highest position. */
  lastOwnEntry(branchId: string): Step<HeadRow | undefined>;
  /** The branch's head position: its own last entry's, or its fork position (undefined: no such branch). */
  headPosition(branchId: string): Step<number | undefined>;
  /** The session with its current branch and head entry, in one lookup. */
  currentOf(sessionId: string): Step<CurrentRow | undefined>;
  ownEntryAt(branchId: string, position: number): Step<EntryRow | undefined>;
  /** Lineage of `branchId` up to `upTo` (or its head when undefined), as segments, root first. */
  lineage(branchId: string, upTo?: number): Step<LineageSegment[]>;
  /** Entries of one segment, in position order. */
  segmentEntries(segment: LineageSegment): Step<EntryRow[]>;
  /**
   * Messages of one segment, in position order, with only the columns a message needs, each passed through
   * `map` (so a long history builds one object per message) and appended to `out`.
   */
  segmentMessages<T>(segment: LineageSegment, map: (row: MessageRow) => T, out: T[]): Step<void>;
  /** The segment's newest message, if it has any. */
  lastSegmentMessage(segment: LineageSegment): Step<MessageRow | undefined>;
  /** The segment's newest `limit` messages, in position order. */
  lastSegmentMessages(segment: LineageSegment, limit: number): Step<MessageRow[]>;
  /**
   * The versions of each of these messages (of one session), in one query: for each, the messages whose nearest message
   * before them is its anchor (tool calls and state changes in between do not count), ordered by `ofId`, then creation.
   */
  messageVersions(sessionId: string, anchors: readonly VersionAnchor[]): Step<VersionRow[]>;
  /** The messages whose nearest message before them is `anchorId` (null: none), whole, oldest first. */
  versionsAfter(sessionId: string, anchorId: string | null): Step<MessageRow[]>;
  /** Names a branch (null clears the name). */
  setBranchName(branchId: string, name: string | null): Step<void>;

  /** Tool entries of one segment with completion and applied status. */
  segmentTools(segment: LineageSegment): Step<ToolRow[]>;
  /**
   * Ids of one segment's tool calls that succeeded and are neither applied nor imported (what a snapshot read now does
   * not hold of them), in position order.
   */
  unappliedTools(segment: LineageSegment): Step<string[]>;
  getTool(entryId: string): Step<ToolRow | undefined>;
  /** Tool invocations with no completion (running, or left running by a crash), in the whole database. */
  runningTools(): Step<ToolRow[]>;
  insertToolResult(row: ToolResultRow): Step<void>;

  /** The id of the snapshot stored under `hash`, stored now (with its state version, default 1) if it is not (content-addressed: stored once). */
  putSnapshot(hash: string, body: string, version?: number): Step<number>;
  /** `putSnapshot` for many at once (an import): each hash's snapshot id. */
  putSnapshots(items: readonly { hash: string; body: string; version: number }[]): Step<Map<string, number>>;
  getSnapshot(id: number): Step<SnapshotRow | undefined>;
  /** Deletes state snapshots no entry or checkpoint points at; returns how many. */
  deleteUnreferencedSnapshots(): Step<number>;
}
