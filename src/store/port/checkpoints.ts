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

/** A checkpoint to insert: its `seq` is assigned by the store, growing in insertion order. */
export type NewCheckpoint = Omit<CheckpointRow, "seq">;

/** What a listing reads: every field but the state and head hash. */
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

export interface CheckpointsTx {
  /**
   * Inserts a checkpoint. Its seq orders it among the others by `insertedAt` (ms, now), whatever its `createdAt`
   * (an imported checkpoint keeps its old time), and is never one a deleted checkpoint had.
   */
  insertCheckpoint(row: NewCheckpoint, insertedAt: number): Step<void>;
  getCheckpoint(id: string): Step<CheckpointRow | undefined>;
  /** A checkpoint with its branch and anchor entries, in one lookup (what a rollback verifies). */
  checkpointAnchor(id: string): Step<CheckpointAnchorRow | undefined>;
  listCheckpoints(filter: CheckpointFilter): Step<ListedCheckpoint[]>;
  /** How many checkpoints the session has that have not expired at `now` (what listings show). */
  countCheckpoints(userId: string, sessionId: string, now: number): Step<number>;
  deleteCheckpoint(id: string): Step<void>;
  /** Every checkpoint of a session, in creation order (expired ones included). */
  sessionCheckpoints(userId: string, sessionId: string): Step<CheckpointRow[]>;
  /** Ids of checkpoints (of one session, or all) whose (user, session) matches no session: only tampering makes them. */
  orphanCheckpointIds(sessionId?: string): Step<string[]>;
  /** True while a journaled move (still running) will create a branch forking at this checkpoint. */
  isMovingFrom(checkpointId: string): Step<boolean>;
  /**
   * Deletes checkpoints expired at `now` (of one session, or all), except those a branch forks from, or will once a
   * running move finishes (they stay invisible). Returns the deleted rows.
   */
  deleteExpiredCheckpoints(now: number, sessionId?: string): Step<CheckpointRow[]>;
}
