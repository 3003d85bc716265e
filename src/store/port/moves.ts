// The world: which invocations are applied, and the journal of moves (their steps) that change it.
import type { ToolRow } from "./entries.js";
import type { MoveStack } from "./move-stack.js";
import type { Step } from "./unit.js";

/**
 * Who runs a journaled move: a process (pid, and where the platform tells, its start). Every journal update is fenced
 * by it: a taken-over move's old owner writes nothing. On stores whose owners hold leases, the lease is the store's to
 * time (its own clock, not the app server's): the engine passes a lease's length (ms), never a time.
 */
export interface Owner {
  pid: number;
  /** The owner's identity beyond its pid (host, boot, start time, thread): null where nothing tells. */
  pidStart: string | null;
}

/** A move as it is journaled. */
export interface NewMove extends Owner {
  id: string;
  sessionId: string;
  kind: string;
  spec: string;
  status: "running" | "done" | "failed";
  createdAt: number;
  finishedAt: number | null;
}

/** A move as it is read back. */
export interface MoveRow extends NewMove {
  /** Lease stores: whether the owner's lease still held when read, by the store's clock; null on process-owned stores. */
  leaseHeld: boolean | null;
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

/** One of a session's own moves, as `undo` and `redo` read them. */
export interface MoveHistoryRow {
  /** Where it is recorded: the id of the branch it made (rollback, edit), or "m:<seq>" (a move that made none). */
  ref: string;
  sessionId: string;
  kind: string;
  fromBranchId: string;
  fromPosition: number;
  toBranchId: string;
  toPosition: number;
  /** The move below it on the session's stack (null: none). */
  prev: string | null;
  createdAt: number;
}

/** Where the session is, as a history move's end: a branch and its head position then. */
export interface MoveEnd {
  branchId: string;
  position: number;
}

/** A history move's ends to set (absent: left as they are). */
export interface MoveEnds {
  from?: MoveEnd;
  to?: MoveEnd;
}

/** A failed guarded block's branch, continued by its rollback's branch while its head is at `atPosition`. */
export interface BranchContinuation {
  byBranchId: string;
  atPosition: number;
  /** The branch's head when the block first wrote on it (see `continueBranch`); null when not recorded. */
  fromPosition: number | null;
}

/** An applied invocation of a session: its entry id and where it sits. */
export interface AppliedCall {
  id: string;
  branchId: string;
  position: number;
}

/** An invocation set aside (`setAside`): its entry id, and the branch and head position the session was at then. */
export interface SetAsideCall {
  id: string;
  /** Null for a row written before the branch was kept: set aside on every lineage. */
  branchId: string | null;
  /** Null for a row written before the position was kept: set aside on every lineage through `branchId`. */
  position: number | null;
}

export interface MovesTx {
  /** Applied invocations of a session, newest application first. */
  appliedTools(sessionId: string): Step<ToolRow[]>;
  /** Applied invocations of a session, newest application first, as where they sit only (no result: one may be large). */
  appliedCalls(sessionId: string): Step<AppliedCall[]>;
  /**
   * Marks an invocation applied (again), as the session's newest application, with the result it had; it is no longer
   * set aside (`setAside`). `through`: the branches whose set-aside of it the lineage it is applied on (a move's target)
   * goes past (see `asideCleared`); it stays set aside on another branch, where a later move still leaves it out.
   */
  markApplied(entryId: string, sessionId: string, result: string | null, at: number, through?: readonly string[]): Step<void>;
  unmarkApplied(entryId: string): Step<void>;
  /**
   * Records that a files-only restore unapplied invocation `entryId` (`unmarkApplied` in the same transaction): its
   * conversation keeps it, the world does not, on `branchId` from its head `position` on. Cleared by its next
   * `markApplied` without `through` or with `branchId` in it; deleted with the session. One record per call and branch:
   * set aside on two branches, it stays out of lineages through either.
   */
  setAside(entryId: string, sessionId: string, branchId: string, position: number, at: number): Step<void>;
  /**
   * The invocations of a session set aside (`setAside`) and not applied since, with where the session was then: one
   * row per call and branch it was set aside on.
   */
  setAsideCalls(sessionId: string): Step<SetAsideCall[]>;

  /**
   * Keeps `result` as that of invocation `entryId`'s current application (its `markApplied`, earlier in the same
   * transaction): a replay that finished (or that `resolveToolCall` says succeeded), or a marking applied again with a
   * replay's result. Kept past `deleteFinishedMoves`, one per application (`replayResult` reads it by its seq), replacing
   * one kept before for the same application; with no application (not applied), it replaces the one kept unnamed.
   * Deleted with the session; not exported, imported or cloned.
   */
  keepReplayResult(entryId: string, sessionId: string, result: string | null, at: number): Step<void>;
  /**
   * The result of the newest replay of invocation `entryId` by a move of `sessionId` (its most recent application by a
   * move): the newest kept (`keepReplayResult`; one kept unnamed is older than any kept for an application), else, for
   * a replay recorded before results were kept, the newest a move journaled as done; undefined when neither is (never
   * replayed, or replayed before results were kept and its move was deleted).
   */
  lastReplay(sessionId: string, entryId: string): Step<{ result: string | null } | undefined>;
  /**
   * The result kept for invocation `entryId`'s application `appliedSeq` (an `applied_seq` it had); null: the one kept
   * with no application named (a replay kept before applications were named). Undefined when none is kept.
   */
  replayResult(entryId: string, appliedSeq: number | null): Step<{ result: string | null } | undefined>;
  /** The applied invocations of a session whose current application has a result kept (replays, not first runs). */
  replayedApplications(sessionId: string): Step<{ entryId: string; appliedSeq: number }[]>;

  /** Invocations of a session whose move step was interrupted by a crash (status "unknown"). */
  uncertainInvocations(sessionId: string): Step<string[]>;
  /** Invocations of every session whose move step a crash interrupted and no one has resolved since (`recover()`). */
  uncertainCalls(): Step<string[]>;
  /** The steps of a session's moves that a crash interrupted (status "unknown") for invocation `entryId`. */
  unknownSteps(sessionId: string, entryId: string): Step<MoveStepRow[]>;
  /**
   * Records what became of a step a crash interrupted (`resolveToolCall`): "done" or "failed", with its result or error.
   * Only a step still "unknown" changes (its move has ended: no owner to fence).
   */
  resolveUnknownStep(moveId: string, idx: number, status: "done" | "failed", result: string | null, error: string | null): Step<void>;
  /** Journals a move; on lease stores its owner holds it for `leaseMs` from now (null: no lease, anyone may claim it). */
  insertMove(row: NewMove, leaseMs: number | null): Step<void>;
  /** Running moves, of one session or all, oldest first. */
  runningMoves(sessionId?: string): Step<MoveRow[]>;
  /**
   * Takes a running move over from the owner it was read with, for `leaseMs` from now on lease stores: false when
   * someone else took it first or, on lease stores, when its lease holds (it was renewed since it was read) and is
   * not `by`'s own.
   */
  claimMove(id: string, owner: Owner, by: Owner, leaseMs: number | null): Step<boolean>;
  /** Extends the lease of a move `owner` still holds to `leaseMs` from now: false when it no longer holds it (taken over). */
  renewMove(id: string, owner: Owner, leaseMs: number): Step<boolean>;
  finishMove(id: string, status: "done" | "failed", at: number): Step<void>;
  insertMoveSteps(rows: MoveStepRow[]): Step<void>;
  moveSteps(moveId: string): Step<MoveStepRow[]>;
  /** The session's newest move, of any status (a stopped one's journal tells the move called again its put-backs). */
  lastMove(sessionId: string): Step<MoveRow | undefined>;
  /**
   * Updates a step of a move `owner` still holds, and on lease stores extends its lease to `leaseMs` from now in the
   * same statement: false (and nothing written) when it no longer holds it.
   */
  setMoveStep(
    owner: Owner,
    moveId: string,
    idx: number,
    status: MoveStepStatus,
    result: string | null,
    error: string | null,
    leaseMs: number | null,
  ): Step<boolean>;
  /**
   * Makes a move that made no branch the session's newest, in a row of its own, and forgets its undone ones (a new move
   * leaves nothing to redo). A move that made a branch is recorded on it (`insertBranch`, then `setCurrentBranch`).
   * `keepUndone`: their rows stay (a guarded block's move, which its failure takes back: they are to redo again then).
   */
  recordMove(row: Omit<MoveHistoryRow, "ref" | "prev">, keepUndone?: boolean): Step<void>;
  /** The session's newest move that stands (what `undo` takes back). */
  moveToUndo(sessionId: string): Step<MoveHistoryRow | undefined>;
  /** The session's last undone move (what `redo` does again). */
  moveToRedo(sessionId: string): Step<MoveHistoryRow | undefined>;
  /** The move a ref names (a row's `prev`, walking down the stack), undefined when there is none. */
  historyMove(ref: string): Step<MoveHistoryRow | undefined>;
  /**
   * Undoes the newest standing move, or redoes the last undone one: false when `ref` is not that move (any more). With
   * `ends`, the move's ends given are set too (where the session is as the op runs, when a failed guarded block's
   * rollback moved it off the move's own end: the next op on this move goes there).
   */
  setMoveUndone(sessionId: string, ref: string, op: "undo" | "redo", ends?: MoveEnds): Step<boolean>;
  /** The session's move stack as it stands: a guarded block notes what its own moves changed of it. */
  moveStack(sessionId: string): Step<MoveStack>;
  /**
   * Sets the session's move stack to `next` while it is `expected` (a failed guarded block taking back what its own
   * moves changed): false, and nothing written, when it is not (another opener moved since).
   */
  swapMoveStack(sessionId: string, expected: MoveStack, next: MoveStack): Step<boolean>;
  /**
   * Records that `byBranchId` (a failed guarded block's rollback branch) continues `branchId`, whose head the block
   * left at `atPosition`: a move to `branchId`'s head lands at `byBranchId`'s while that head is still there.
   * `fromPosition`: the head when the block first wrote on it (what it wrote comes after), for a branch it did not run on.
   */
  continueBranch(branchId: string, byBranchId: string, atPosition: number, fromPosition?: number): Step<void>;
  /** The branch that continues `branchId` and its position then (see `continueBranch`), undefined when none does. */
  branchContinuation(branchId: string): Step<BranchContinuation | undefined>;

  /**
   * Deletes finished moves (and their steps) of one session or all, keeping any with a step of unknown outcome, and a
   * session's newest move when it stopped ("failed") with hand edits put back (an undo step's result, or the spec's
   * `putBacks`): the move called again next holds them.
   */
  deleteFinishedMoves(sessionId?: string): Step<number>;
}
