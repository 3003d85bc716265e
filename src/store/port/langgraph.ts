// The tables behind `ForkpointSaver` (LangGraph's checkpointer interface): threads, LangGraph checkpoints, channel
// values by version and pending writes, keyed by the forkpoint session a thread maps to.
import type { Step } from "./unit.js";

/** A LangGraph thread (one namespace of it) of a user, and the session it lives in. */
export interface LgThreadRow {
  userId: string;
  threadId: string;
  checkpointNs: string;
  sessionId: string;
  startCheckpointId: string;
}

/** A LangGraph checkpoint as stored: serialized without its channel values. */
export interface LgCheckpointRow {
  sessionId: string;
  checkpointId: string;
  parentCheckpointId: string | null;
  fpCheckpointId: string;
  type: string;
  checkpoint: Buffer;
  metadataType: string;
  metadata: Buffer;
  messagesVersion: string | null;
}

/**
 * Where a LangGraph checkpoint sits in its session's tree: its forkpoint checkpoint's branch, position and head hash,
 * and LangGraph's `source` (as the forkpoint checkpoint's metadata keeps it).
 */
export interface LgPointRow {
  checkpointId: string;
  fpCheckpointId: string;
  branchId: string;
  position: number;
  headHash: string;
  source: string | null;
  /** Its forkpoint checkpoint's seq: the order checkpoints were written in (a user's among them). */
  seq: number;
}

/** A listed checkpoint, with the thread it belongs to. */
export type LgListedRow = LgCheckpointRow & { threadId: string; checkpointNs: string };

/** A serialized value of one channel at one version. */
export interface LgBlobRow {
  sessionId: string;
  channel: string;
  version: string;
  type: string;
  value: Buffer;
}

/** One pending write. */
export interface LgWriteRow {
  sessionId: string;
  checkpointId: string;
  taskId: string;
  idx: number;
  channel: string;
  type: string;
  value: Buffer;
  taskPath: string;
}

/** Where a pending write sits: its checkpoint, task and index, and the channel it writes (`prune` weighs them). */
export type LgWriteKey = Pick<LgWriteRow, "checkpointId" | "taskId" | "idx" | "channel">;

/** A stored channel value's key, without the value. */
export type LgBlobKey = Pick<LgBlobRow, "channel" | "version">;

/** What `list` filters on. `metadata`: top-level keys whose JSON must equal the given JSON text. */
export interface LgListFilter {
  userId: string;
  threadId?: string;
  checkpointNs?: string;
  /** Only this checkpoint (a config that names one, as MemorySaver reads it). */
  checkpointId?: string;
  before?: string;
  metadata: [key: string, json: string][];
  limit?: number;
}

export interface LangGraphTx {
  getThread(userId: string, threadId: string, checkpointNs: string): Step<LgThreadRow | undefined>;
  insertThread(row: LgThreadRow): Step<void>;
  /** The sessions of every namespace of a user's thread. */
  threadSessions(userId: string, threadId: string): Step<string[]>;
  /** True when the session holds a LangGraph thread. */
  isThreadSession(sessionId: string): Step<boolean>;
  /** The thread (namespace) a session holds, if it holds one. */
  threadOfSession(sessionId: string): Step<LgThreadRow | undefined>;
  /** Where each of the session's LangGraph checkpoints sits in its tree (one row per checkpoint, in no order). */
  pointsOf(sessionId: string): Step<LgPointRow[]>;
  /** Where one LangGraph checkpoint of the session sits in its tree. */
  pointOf(sessionId: string, checkpointId: string): Step<LgPointRow | undefined>;
  /** Where the session's newest LangGraph checkpoint (by id: LangGraph's are time-ordered) sits in its tree. */
  latestPoint(sessionId: string): Step<LgPointRow | undefined>;
  /**
   * Where the LangGraph checkpoint stored latest on `branchId` sits (its forkpoint checkpoint's seq highest, then the
   * newest id), if any: one row, not the session's every point.
   */
  latestPointOn(sessionId: string, branchId: string): Step<LgPointRow | undefined>;
  /** The LangGraph checkpoint stored in this forkpoint checkpoint (the newest, should there be several). */
  checkpointInFp(fpCheckpointId: string): Step<LgCheckpointRow | undefined>;
  /** The checkpoint with this id, or the thread's newest (ids are time-ordered uuid6) when `checkpointId` is absent. */
  getCheckpoint(sessionId: string, checkpointId?: string): Step<LgCheckpointRow | undefined>;
  insertCheckpoint(row: LgCheckpointRow): Step<void>;
  /** True when a LangGraph checkpoint is stored in this forkpoint checkpoint, or it is a thread's empty start. */
  usesFpCheckpoint(fpCheckpointId: string): Step<boolean>;
  /** True when some LangGraph checkpoint of the session is stored on `branchId` at `position` or after it. */
  landedOnBranch(sessionId: string, branchId: string, position: number): Step<boolean>;
  /** True when some LangGraph checkpoint of the session is stored on `branchId` in a forkpoint checkpoint after `seq`. */
  landedSince(sessionId: string, branchId: string, seq: number): Step<boolean>;
  /**
   * The position of the first LangGraph checkpoint of the session stored on `branchId` in a forkpoint checkpoint after
   * `seq`, with `from <= position <= upTo`, if any.
   */
  firstLandedSince(sessionId: string, branchId: string, seq: number, from: number, upTo: number): Step<number | undefined>;
  /** A user's checkpoints matching `filter`, newest id first. */
  listCheckpoints(filter: LgListFilter): Step<LgListedRow[]>;
  /** Stores a channel value at a version (once). */
  insertBlob(row: LgBlobRow): Step<void>;
  getBlob(sessionId: string, channel: string, version: string): Step<LgBlobRow | undefined>;
  /** Stores writes; `replace` overwrites earlier ones at the same (task, idx), as LangGraph's special writes do. */
  insertWrites(rows: LgWriteRow[], replace: boolean): Step<void>;
  /** Whether the graph went on from this checkpoint (some checkpoint of the session names it as its parent). */
  hasChild(sessionId: string, checkpointId: string): Step<boolean>;
  writesOf(sessionId: string, checkpointId: string): Step<LgWriteRow[]>;
  /** Deletes the thread's LangGraph rows (its session is deleted by the caller). */
  deleteThreadRows(sessionId: string): Step<void>;
  /** Every LangGraph checkpoint of the session, in no order (`prune` weighs them all). */
  checkpointsOf(sessionId: string): Step<LgCheckpointRow[]>;
  /** The keys of the session's stored channel values. */
  blobKeysOf(sessionId: string): Step<LgBlobKey[]>;
  /** Every stored channel value of the session, with its value, in no order (an export carries them). */
  blobsOf(sessionId: string): Step<LgBlobRow[]>;
  /** Every pending write of the session, whatever checkpoint id it names, in no order (an export carries them). */
  allWritesOf(sessionId: string): Step<LgWriteRow[]>;
  /** Where each of the session's pending writes sits (whatever checkpoint id it names, stored or not). */
  writeKeysOf(sessionId: string): Step<LgWriteKey[]>;
  /** Deletes these LangGraph checkpoints of the session, with every pending write made under their ids. */
  deleteCheckpointRows(sessionId: string, checkpointIds: readonly string[]): Step<void>;
  /** Deletes these pending writes of the session (their checkpoint, task and index). */
  deleteWrites(sessionId: string, keys: readonly Omit<LgWriteKey, "channel">[]): Step<void>;
  /** Deletes every pending write of the session made under these checkpoint ids. */
  deleteWritesOf(sessionId: string, checkpointIds: readonly string[]): Step<void>;
  /** Deletes these stored channel values of the session. */
  deleteBlobs(sessionId: string, keys: readonly LgBlobKey[]): Step<void>;
}
