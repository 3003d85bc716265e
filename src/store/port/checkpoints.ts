// Checkpoints: named, immutable points of a branch, listed per user with keyset pagination.
import type { BranchRow, EntryRow } from "./entries.js";
import type { Step } from "./unit.js";

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

/**
 * A checkpoint to insert: its `seq` is assigned by the store, growing in insertion order. With `request`, its row keeps
 * the request that made it (a turn's): the unit fails with `RequestTakenError` when the session applied that id already.
 */
export type NewCheckpoint = Omit<CheckpointRow, "seq"> & { request?: CheckpointRequest | undefined };

/** A request a checkpoint's row keeps: its id, fingerprint and answer, as the ledger's `RequestRow` has them. */
export interface CheckpointRequest {
  id: string;
  fingerprint: string;
  answer: string;
}

/** What a listing reads: every field but the state and head hash. */
export type ListedCheckpoint = Omit<CheckpointRow, "stateId" | "headHash">;

export interface CheckpointFilter {
  userId: string;
  sessionId?: string;
  name?: string;
  since?: number;
  until?: number;
  auto?: boolean;
  /** Top-level metadata equalities, each `[key, JSON text of the value]`, all of which must hold (read by index). */
  metadata?: [key: string, value: string][];
  /** Only rows with seq below this (keyset pagination). */
  beforeSeq?: number;
  /** Hide checkpoints expired at this time. */
  now: number;
  limit: number;
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

/** A checkpoint as retention weighs it. */
export interface RetentionRow {
  seq: number;
  id: string;
  branchId: string;
  name: string | null;
  auto: boolean;
  createdAt: number;
}

/** One name's live checkpoints of a session (`name` null: the unnamed ones), for `summary`. */
export interface CheckpointNameStats {
  name: string | null;
  count: number;
  firstAt: number;
  lastAt: number;
}

/**
 * Top-level metadata values longer than this (as JSON text), and longer keys, are not indexed for filtering; nor are
 * keys holding a NUL, which the index stores as plain text (a filter cannot name one: filters take plain text).
 */
export const MAX_INDEXED_METADATA = 256;

/** A row of the checkpoint metadata index: its checkpoint's user, a top-level key, and the JSON text of its value. */
export interface IndexedMetadataRow {
  userId: string;
  key: string;
  value: string;
}

/** The `[key, JSON text of the value]` pairs of a checkpoint's metadata that the metadata index holds: scalars only. */
export function indexedMetadata(metadata: string | null): [string, string][] {
  if (metadata === null) return [];
  const pairs: [string, string][] = [];
  for (const [key, value] of Object.entries(JSON.parse(metadata) as Record<string, unknown>)) {
    if (value !== null && typeof value === "object") continue;
    const text = JSON.stringify(value);
    if (key.length <= MAX_INDEXED_METADATA && text.length <= MAX_INDEXED_METADATA && !key.includes("\0")) pairs.push([key, text]);
  }
  return pairs;
}

export interface CheckpointsTx {
  /**
   * Inserts a checkpoint. Its seq orders it among the others by `insertedAt` (ms, now), whatever its `createdAt`
   * (an imported checkpoint keeps its old time), and is never one a deleted checkpoint had.
   */
  insertCheckpoint(row: NewCheckpoint, insertedAt: number): Step<void>;
  getCheckpoint(id: string): Step<CheckpointRow | undefined>;
  /** The time of the session's newest checkpoint (expired ones included; 0: none). */
  lastCheckpointAt(userId: string, sessionId: string): Step<number>;
  /** A checkpoint with its branch and anchor entries, in one lookup (what a rollback verifies). */
  checkpointAnchor(id: string): Step<CheckpointAnchorRow | undefined>;
  listCheckpoints(filter: CheckpointFilter): Step<ListedCheckpoint[]>;
  /**
   * The newest `limit` checkpoints live at `now` of each of these branches of the user's, newest first within a
   * branch, read per branch by index: what a tree view draws inside each branch, bounded however many there are.
   */
  newestPerBranch(userId: string, branchIds: readonly string[], now: number, limit: number): Step<ListedCheckpoint[]>;
  /** How many checkpoints the session has that have not expired at `now` (what listings show). */
  countCheckpoints(userId: string, sessionId: string, now: number): Step<number>;
  deleteCheckpoint(id: string): Step<void>;
  /** Every checkpoint of a session, in creation order (expired ones included). */
  sessionCheckpoints(userId: string, sessionId: string): Step<CheckpointRow[]>;
  /** Ids of checkpoints (of one session, or all) whose (user, session) matches no session: only tampering makes them. */
  orphanCheckpointIds(sessionId?: string): Step<string[]>;
  /**
   * The metadata index's rows of the checkpoint with this seq (what `listCheckpoints({ metadata })` finds it by), in no
   * particular order: `verify` compares them with the ones its metadata makes (`indexedMetadata`). One index lookup.
   */
  checkpointMetadataRows(cpSeq: number): Step<IndexedMetadataRow[]>;
  /**
   * The position of the newest checkpoint with files on `branchId` with `from <= position <= upTo` (the one whose
   * snapshot `lastCheckpointFiles` finds), if any.
   */
  lastFilesPosition(branchId: string, from: number, upTo: number): Step<number | undefined>;
  /** True while a journaled move (still running) will create a branch forking at this checkpoint. */
  isMovingFrom(checkpointId: string): Step<boolean>;
  /**
   * Deletes checkpoints expired at `now` (of one session, or all), except those a branch forks from, or will once a
   * running move finishes, or a hold keeps (they stay invisible), and the holds that have lapsed. Returns the deleted
   * rows.
   */
  deleteExpiredCheckpoints(now: number, sessionId?: string): Step<CheckpointRow[]>;
  /**
   * Sets `expires_at` of these checkpoints to `at` (they stop showing at once; prune deletes them later), with the
   * checksum that covers it.
   */
  expireCheckpoints(expired: { id: string; checksum: string }[], at: number): Step<void>;
  /** The session's checkpoint live at `now` that `offset` others are newer than (0: the newest). */
  liveCheckpointAt(userId: string, sessionId: string, now: number, offset: number): Step<RetentionRow | undefined>;
  /** The newest live checkpoint of the session with this name (null: unnamed) below `beforeSeq`. */
  newestNamed(sessionId: string, name: string | null, now: number, beforeSeq: number): Step<RetentionRow | undefined>;
  /**
   * The newest `limit` live checkpoints of the branch of one kind (automatic or not), newest first, read by index: what
   * retention's `keepLast` weighs per branch. Only checkpoints of sessions with a policy (`weighed`) are read.
   */
  branchCheckpoints(branchId: string, auto: boolean, now: number, limit: number): Step<RetentionRow[]>;
  /** The newest live checkpoint of the branch below `beforeSeq` (of any kind), read by index. */
  newestOnBranch(branchId: string, now: number, beforeSeq: number): Step<RetentionRow | undefined>;
  /** The seq of the session's first checkpoint (expired ones included); undefined when it has none. */
  firstCheckpointSeq(userId: string, sessionId: string): Step<number | undefined>;
  /** Live checkpoints made after `afterAt` and at or before `cutoff`, oldest first, at most `limit` (read by index). */
  agedCheckpoints(sessionId: string, afterAt: number, cutoff: number, now: number, limit: number): Step<RetentionRow[]>;
  /**
   * True when a branch of the session forks from it, a running move will, a LangGraph checkpoint holds it, or a hold
   * keeps it.
   */
  checkpointInUse(sessionId: string, checkpointId: string): Step<boolean>;
  /**
   * Holds a checkpoint of `sessionId` (a guarded block's) for `holdMs` from now by the store's clock, or extends its
   * hold: while a hold lasts, retention weighs it as in use and prune keeps it.
   */
  holdCheckpoint(checkpointId: string, sessionId: string, holdMs: number): Step<void>;
  /** Ends a checkpoint's hold. */
  releaseCheckpoint(checkpointId: string): Step<void>;
  /** The session's live checkpoints counted per name, with their first and last creation times. */
  checkpointStats(userId: string, sessionId: string, now: number): Step<CheckpointNameStats[]>;
}
