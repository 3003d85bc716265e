// What a move is: its spec (persisted with its journal), its outcome, and the moves this process is running.
import type { Checkpoint, Message, MoveResult } from "../../models/types.js";
import type { BranchRow, Step, Tx } from "../../store/port/index.js";
import type { StackChange } from "../core/block-scope.js";
import { type Head } from "../core/head.js";
import { type EntryFields } from "../log/writer.js";
import { type MoveTarget } from "./move-plan.js";
import type { PutBacks } from "./put-back.js";
import type { ContinuedByFork } from "./continued.js";

/** Everything needed to finish a move, persisted with its journal so a crash can be resumed. */
export interface MoveSpec {
  kind: "rollback" | "edit" | "switch";
  sessionId: string;
  userId: string;
  target: MoveTarget;
  /** The branch a rollback or edit creates once the world has moved (id chosen up front). */
  newBranch: BranchRow | null;
  /**
   * The edited message, appended on the new branch after `base` (the fork entry's head; read again when absent), and
   * after `carried`: messages written with it before it, written again first (an edit that forks before the calls a
   * run's input caused, of an input item after the first: see `editPoint`).
   */
  edit: { id: string; fields: EntryFields; base?: Head; carried?: EntryFields[] } | null;
  onError: "stop" | "continue";
  skipped: string[];
  /** Calls left as they are because their tool is not registered (absent in journals written before it was kept). */
  unregistered?: string[];
  unknown: string[];
  /** Where the session was when the move was planned: what `undo` goes back to (absent in older journals). */
  from?: MoveTarget;
  /**
   * Set on `undo` and `redo`: the history row they take back or do again (they are not rows of it themselves); `ends`:
   * where the session was, when not at that move's end (see `historyMoveSpec`), recorded as the end(s) the next op goes to.
   */
  history?: { op: "undo" | "redo"; ref: string; kind: string; ends?: { from?: MoveTarget; to?: MoveTarget } };
  /**
   * Set on a failed guarded block's own rollback (`atomic`): not the user's move, so not in the move history (undo
   * takes back the user's last move before the block, as if the block never ran).
   */
  unrecorded?: true;
  /**
   * With `unrecorded`: the branches the block's own writes and moves landed on or made (see block-scope.ts). A list,
   * as the spec is stored as JSON for recovery to finish the move.
   */
  blockBranches?: readonly string[];
  /** With `unrecorded`: the block's own moves' changes to the move stack, taken back by its rollback (block-history.ts). */
  blockMoves?: readonly StackChange[];
  /** With `unrecorded`: the request ids the block's own calls recorded, forgotten with the move (a retry applies them again). */
  blockRequests?: readonly string[];
  /** With `unrecorded`: of `blockBranches`, each one's head before the block's first write there (what it wrote is after). */
  blockStarts?: Readonly<Record<string, number>>;
  /** With `newBranch`, a move to a failed block's branch entering it as before the block: that branch, continued by it. */
  continues?: ContinuedByFork;
  /**
   * The target is where the session already is (a rollback to the head it is at, a switch to the current branch):
   * when the world's applied set matches too (nothing to undo or replay), the move changes nothing.
   */
  sameAsWorld?: boolean;
  /**
   * The request the move was made with (`requestId`): recorded, with the move's answer, in the transaction that
   * finishes it (recovery's too); `extra` is what the answer carries beyond the conversation's move (its files).
   */
  request?: { id: string; fingerprint: string; extra?: Pick<MoveResult, "files" | "savedDrift"> };
  /**
   * Set when the move restores the workspace's files too (scope "both"): the snapshot restored once the undos are done,
   * before the replays, and the target's calls it holds (marked applied then, never run), with the `applied_seq` of
   * those it holds a replay of (absent in older journals: see `markHeld`); `stays`: the applied calls the world shares
   * with the target made after that snapshot, which the move leaves applied (its restore gives their paths what they
   * left there, or keeps them as the world has them: see `leftApplied`, `keptTarget`).
   */
  files?: { manifestId: number; covered: string[]; replays?: Record<string, number>; stays?: string[] };
  /**
   * Called again after a stop: the hand edits the stopped move put back (see `stoppedPutBacks`), each path with its
   * content's fingerprint; held by this one where the file still holds just that.
   */
  putBacks?: PutBacks;
}

/** A move's result; an edit's carries its message, and the checkpoint written with it when one was asked for. */
export type MoveOutcome = MoveResult & { message?: Message; checkpoint?: Checkpoint };

/** A move as rollback, edit and switch build it (the policies are added by `performMove`). */
export type BaseMoveSpec = Omit<MoveSpec, "onError" | "skipped" | "unregistered" | "unknown">;

/**
 * Runs in the transaction that finishes a move, after the session is on its target: what the caller writes there
 * lands with the move, with no other writer in between (ForkpointSaver's put after a fork). Throwing undoes the move
 * when no tool ran; after tools ran, the move still finishes without it, and the error is thrown after.
 */
export type WithinMove = (tx: Tx, outcome: MoveOutcome) => Step<void>;
