// The store interface the engine talks to. Rows hold JSON as text; the engine parses and validates.
// Methods are synchronous and run inside `read` / `write` units of work, which the store makes atomic.
import type { LangGraphTables } from "./langgraph-tables.js";

export interface SessionRow {
  seq: number;
  id: string;
  userId: string;
  title: string | null;
  metadata: string | null;
  currentBranchId: string;
  originSessionId: string | null;
  originCheckpointId: string | null;
  hasTools: boolean;
  hasWorkspace: boolean;
  createdAt: number;
  updatedAt: number;
}

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

/** A session's attached workspace. */
export interface WorkspaceRow {
  sessionId: string;
  dir: string;
  /** JSON array of .gitignore-style patterns. */
  exclude: string;
  /** The files as forkpoint last saw or wrote them. */
  manifestId: number;
  /** While a move rewrites the directory: JSON `{ manifestId, pid, pidStart }` (see the schema). */
  restoring?: string | null;
  updatedAt: number;
}

/** The files a checkpoint captured, and the directory and exclude list they were read under. */
export interface CheckpointFilesRow {
  manifestId: number;
  dir: string;
  exclude: string;
}

/** What a lineage's head needs of its last entry (no content: heads are read on every write). */
export type HeadRow = Pick<EntryRow, "id" | "position" | "hash" | "stateId" | "msgCount">;

/** A session, its current branch and that branch's last own entry: where every write to a session starts. */
export interface CurrentRow {
  session: SessionRow;
  branch: BranchRow;
  last: HeadRow | undefined;
}

/**
 * A checkpoint with its branch and that branch's own entries at the checkpoint's position (`anchor`) and the one
 * before it (`previousHash`): what a rollback verifies, read in one lookup. Both are absent when the position
 * is not after the branch's fork position + 1 (the caller then reads them through the lineage).
 */
export interface CheckpointAnchorRow {
  checkpoint: CheckpointRow;
  /** Undefined only when the branch row is missing (damage). */
  branch: BranchRow | undefined;
  anchor: EntryRow | undefined;
  previousHash: string | undefined;
}

/** A message entry with its branch and the head of the branch's own entry before it (absent at the fork). */
export interface EntryBaseRow {
  entry: EntryRow;
  branch: BranchRow;
  base: HeadRow | undefined;
}

/** The columns a message needs: what history reads. */
export type MessageRow = Pick<EntryRow, "id" | "branchId" | "position" | "role" | "content" | "clientId" | "metadata" | "createdAt">;

/** An entry to insert (its `seq` is assigned by the store). */
export type NewEntry = Omit<EntryRow, "seq">;

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

export interface CheckpointRow {
  seq: number;
  id: string;
  sessionId: string;
  branchId: string;
  position: number;
  name: string | null;
  auto: boolean;
  metadata: string | null;
  userId: string;
  stateId: number | null;
  headHash: string;
  checksum: string;
  createdAt: number;
  expiresAt: number | null;
}
export type NewCheckpoint = Omit<CheckpointRow, "seq">;
/** What a listing reads (from the covering index alone): every field but the state and head hash. */
export type ListedCheckpoint = Omit<CheckpointRow, "stateId" | "headHash">;

export interface CheckpointFilter {
  userId: string;
  sessionId?: string;
  name?: string;
  since?: number;
  until?: number;
  auto?: boolean;
  /** Only rows with seq below this (keyset pagination). */
  beforeSeq?: number;
  /** Hide checkpoints expired at this time. */
  now: number;
  limit: number;
}

export interface EventRow {
  seq: number;
  sessionId: string;
  kind: string;
  refId: string;
  branchId: string;
  detail: string | null;
  createdAt: number;
}

/** A piece of a lineage: entries of `branchId` with `after < position <= upTo`. Root first. */
export interface LineageSegment {
  branchId: string;
  after: number;
  upTo: number;
}

export interface MoveRow {
  id: string;
  sessionId: string;
  kind: string;
  spec: string;
  status: "running" | "done" | "failed";
  pid: number;
  /** See `processStart`: null where the platform cannot tell. */
  pidStart: string | null;
  createdAt: number;
  finishedAt: number | null;
}

export type MoveStepStatus = "pending" | "running" | "done" | "failed" | "unknown";
export interface MoveStepRow {
  moveId: string;
  idx: number;
  op: "undo" | "replay";
  entryId: string;
  status: MoveStepStatus;
  result: string | null;
  error: string | null;
}

/** A position-ordered timeline row: an entry or an event. */
export interface TimelineRow {
  source: "entry" | "event";
  kind: string;
  refId: string;
  branchId: string;
  detail: string | null;
  createdAt: number;
  seq: number;
}

/** The tables behind `ForkpointSaver` (structurally: another store implements the same methods). */
export type LangGraphStore = Omit<LangGraphTables, never>;

export interface Store {
  /** `ForkpointSaver`'s tables: LangGraph threads, checkpoints, channel values and pending writes. */
  readonly langgraph: LangGraphStore;
  /** Runs `fn` in a write transaction that takes the database lock up front (BEGIN IMMEDIATE). */
  write<T>(fn: () => T): Promise<T>;
  /** Runs `fn` in a read transaction: one consistent snapshot. */
  read<T>(fn: () => T): Promise<T>;
  /** Runs `fn`, a single-statement read, without a transaction (one statement is its own snapshot). */
  query<T>(fn: () => T): Promise<T>;
  close(): Promise<void>;
  readonly closed: boolean;

  insertSession(row: Omit<SessionRow, "seq" | "hasTools" | "hasWorkspace">): void;
  getWorkspace(sessionId: string): WorkspaceRow | undefined;
  /** Attaches (or re-attaches) the session's workspace, and marks the session as having one. */
  putWorkspace(row: WorkspaceRow): void;
  /** Records the files as forkpoint last saw or wrote them. */
  setWorkspaceManifest(sessionId: string, manifestId: number, at: number): void;
  /** Journals (or clears, with null) a restore of the workspace's directory in progress. */
  setWorkspaceRestoring(sessionId: string, restoring: string | null): void;
  /** Replaces the restore journal only if it still is `expected` (one process takes an interrupted restore over). */
  claimWorkspaceRestore(sessionId: string, expected: string, next: string): boolean;
  /** Workspaces whose directory a move was rewriting when its process stopped (or still is). */
  restoringWorkspaces(): WorkspaceRow[];
  /** Stores a file's content under its hash (once). */
  insertBlob(hash: string, content: Buffer): void;
  getBlob(hash: string): Buffer | undefined;
  manifestId(hash: string): number | undefined;
  insertManifest(hash: string, body: string): number;
  getManifest(id: number): { hash: string; body: string } | undefined;
  insertCheckpointFiles(row: CheckpointFilesRow & { checkpointId: string }): void;
  /** The files a checkpoint captured (none when it was taken without a workspace). */
  checkpointManifest(checkpointId: string): CheckpointFilesRow | undefined;
  /** The files of the newest checkpoint with files on `branchId` with `from <= position <= upTo`. */
  lastCheckpointFiles(branchId: string, from: number, upTo: number): CheckpointFilesRow | undefined;
  /** Deletes file manifests no checkpoint or workspace holds, and contents no manifest holds; returns how many. */
  deleteUnreferencedFiles(): number;
  /** Records that the session has tool calls (once). */
  markHasTools(sessionId: string): void;
  /** The session row; `updatedAt` is the time of its last move (cheap: for ownership checks). */
  getSession(id: string): SessionRow | undefined;
  /** The session row with `updatedAt` also counting the current branch's last entry (what `info()` shows). */
  getSessionInfo(id: string): SessionRow | undefined;
  listSessions(userId: string, beforeSeq: number | undefined, limit: number): SessionRow[];
  setCurrentBranch(sessionId: string, branchId: string, at: number): void;

  insertBranch(row: BranchRow): void;
  getBranch(id: string): BranchRow | undefined;
  listBranches(sessionId: string): BranchRow[];
  /** Branches whose base is `forkEntryId` (null: branches of the session starting at position 0). */
  branchesForkedAt(sessionId: string, forkEntryId: string | null): BranchRow[];
  /** Number of branches that fork at this checkpoint. */
  countBranchesForkedFrom(checkpointId: string): number;

  insertEntry(row: NewEntry): void;
  getEntry(id: string): EntryRow | undefined;
  /** An entry with its branch and the head before it, in one lookup (what an edit forks from). */
  entryWithBase(id: string): EntryBaseRow | undefined;
  /** The branch's own entry with the highest position. */
  lastOwnEntry(branchId: string): HeadRow | undefined;
  /** The session with its current branch and head entry, in one lookup. */
  currentOf(sessionId: string): CurrentRow | undefined;
  ownEntryAt(branchId: string, position: number): EntryRow | undefined;
  /** Lineage of `branchId` up to `upTo` (or its head when undefined), as segments, root first. */
  lineage(branchId: string, upTo?: number): LineageSegment[];
  /** Entries of one segment, in position order. */
  segmentEntries(segment: LineageSegment): EntryRow[];
  /**
   * Messages of one segment, in position order, with only the columns a message needs, each passed through
   * `map` (so a long history builds one object per message) and appended to `out`.
   */
  segmentMessages<T>(segment: LineageSegment, map: (row: MessageRow) => T, out: T[]): void;
  /** Tool entries of one segment with completion and applied status. */
  segmentTools(segment: LineageSegment): ToolRow[];
  /** The segment's newest message, if it has any (walks the branch's positions backwards). */
  lastSegmentMessage(segment: LineageSegment): MessageRow | undefined;
  /** How many branches the session has, the root included. */
  countBranches(sessionId: string): number;
  /** How many checkpoints the session has that have not expired at `now` (what listings show). */
  countCheckpoints(userId: string, sessionId: string, now: number): number;
  getTool(entryId: string): ToolRow | undefined;
  /** Tool invocations with no completion (running, or left running by a crash), in the whole database. */
  runningTools(): ToolRow[];
  /** Number of entries of each branch of a session: their heads. */
  branchHeads(sessionId: string): Map<string, number>;

  insertToolResult(row: ToolResultRow): void;

  snapshotId(hash: string): number | undefined;
  insertSnapshot(hash: string, body: string): number;
  getSnapshot(id: number): { hash: string; body: string } | undefined;

  /** Inserts a checkpoint; `insertedAt` (ms, now) orders it among the others, whatever its `createdAt`. */
  insertCheckpoint(row: NewCheckpoint, insertedAt: number): void;
  getCheckpoint(id: string): CheckpointRow | undefined;
  /** A checkpoint with its branch and anchor entries, in one lookup (what a rollback verifies). */
  checkpointAnchor(id: string): CheckpointAnchorRow | undefined;
  listCheckpoints(filter: CheckpointFilter): ListedCheckpoint[];
  deleteCheckpoint(id: string): void;
  /** Every checkpoint of a session, in creation order (expired ones included). */
  sessionCheckpoints(userId: string, sessionId: string): CheckpointRow[];
  /** Ids of checkpoints (of one session, or all) whose (user, session) matches no session: only tampering makes them. A full scan. */
  orphanCheckpointIds(sessionId?: string): string[];
  /** True while a journaled move (still running) will create a branch forking at this checkpoint. */
  isMovingFrom(checkpointId: string): boolean;
  /** Records that a tool call came in through `importSession` (never replayed here). */
  insertImportedCall(entryId: string, sessionId: string): void;
  /** The session's imported tool calls. */
  importedCalls(sessionId: string): Set<string>;
  /** Ids of every session, in creation order. */
  allSessionIds(): string[];

  insertEvent(row: Omit<EventRow, "seq">): void;
  /** The session's events (not entries), in the order they happened. */
  sessionEvents(sessionId: string): EventRow[];
  /** Entries and events of a session, newest first, below `(createdAt, seq)` of the cursor. */
  timeline(
    userId: string,
    sessionId: string,
    before: { createdAt: number; seq: number; source: string } | undefined,
    limit: number,
  ): TimelineRow[];

  /** Applied invocations of a session, newest application first. */
  appliedTools(sessionId: string): ToolRow[];
  markApplied(entryId: string, sessionId: string, result: string | null, at: number): void;
  unmarkApplied(entryId: string): void;

  /** Invocations of a session whose move step was interrupted by a crash (status "unknown"). */
  uncertainInvocations(sessionId: string): string[];
  insertMove(row: MoveRow): void;
  runningMoves(sessionId?: string): MoveRow[];
  /** Takes a running move over from the (dead) owner it was read with: false when someone else took it first. */
  claimMove(id: string, owner: Pick<MoveRow, "pid" | "pidStart">, by: Pick<MoveRow, "pid" | "pidStart">): boolean;
  finishMove(id: string, status: "done" | "failed", at: number): void;
  insertMoveSteps(rows: MoveStepRow[]): void;
  moveSteps(moveId: string): MoveStepRow[];
  setMoveStep(moveId: string, idx: number, status: MoveStepStatus, result: string | null, error: string | null): void;

  /**
   * Deletes checkpoints expired at `now` (of one session, or all), except those a branch forks from, or will once a
   * running move finishes (they stay invisible). Returns the deleted rows.
   */
  deleteExpiredCheckpoints(now: number, sessionId?: string): CheckpointRow[];
  /** Deletes state snapshots no entry or checkpoint points at; returns how many. */
  deleteUnreferencedSnapshots(): number;
  /** Deletes finished moves (and their steps) of one session or all, keeping any with a step of unknown outcome. */
  deleteFinishedMoves(sessionId?: string): number;
  /**
   * Deletes a session and everything it recorded (branches, entries, checkpoints, tool results, journals, events, its
   * workspace record and LangGraph rows). Shared state documents and file contents are left to `prune`.
   */
  deleteSession(sessionId: string): void;
  /** Rebuilds the file without free pages (SQLite VACUUM), then truncates the WAL; outside any unit of work. */
  vacuum(): void;
  /** Absolute paths of the database's own files (none in memory): a workspace never snapshots them. */
  databaseFiles(): string[];
  /** Bytes the database takes: its pages, plus the WAL file for a file database. */
  sizeBytes(): number;

  /** Every row of every table, for integrity checks and tests ("the database is unchanged"). */
  dump(): string;

  /** Every user's sessions, newest first (an operator listing, not scoped to a user). */
  listAllSessions(beforeSeq: number | undefined, limit: number): SessionRow[];
  /** The users that own sessions, by id after `afterUserId`, with how many sessions and when one was last updated. */
  listUsers(afterUserId: string | undefined, limit: number): UserRow[];
}

/** A user as the operator listing shows one. */
export interface UserRow {
  userId: string;
  sessions: number;
  updatedAt: number;
}
