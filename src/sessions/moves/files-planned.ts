// A "both" move's files step is planned in one unit and its conversation in the next: this checks that nothing moved in
// between, and asks the move to be planned again when something did.
import { ConflictError } from "../../models/errors.js";
import type { SessionRow, Step, Tx } from "../../store/port/index.js";
import type { PreparedRestore } from "../workspace/prepare-restore.js";
import { targetFiles, workspaceOf } from "../workspace/snapshots.js";
import { sessionPosition } from "./history.js";
import type { BaseMoveSpec } from "./move-spec.js";

/** A "both" move's files as planned: the snapshot it restores, checked, and where the session was when it was chosen. */
export interface PlannedFiles {
  manifestId: number;
  prepared: PreparedRestore;
  at: { branchId: string; head: number };
}

/** How often a move is planned again for another handle's, process's or server's write in its window, before it gives up. */
export const PLANNING_ATTEMPTS = 5;

/** Refusals that planning the move again (files first) gets past: the session moved between the two units. */
const replannable = new WeakSet<Error>();

/** Whether `error` refused a move only because the session moved after its files were planned (see `checkFilesPlanned`). */
export const isReplannable = (error: unknown): boolean => error instanceof Error && replannable.has(error);

/**
 * Throws a `ConflictError` `MOVE_IN_PROGRESS` (in the conversation's unit, before it writes) unless the session is where
 * it was when `files` was planned (current branch and head) and the move's target still restores `files.manifestId`.
 * Another move, call or capture in between would leave the conversation moved around one snapshot and the files
 * restored to another (or to a directory that changed since): the caller plans the move again from the start.
 */
export function* checkFilesPlanned(tx: Tx, session: SessionRow, base: BaseMoveSpec, files: Omit<PlannedFiles, "prepared">): Step<void> {
  const here = yield* sessionPosition(tx, session);
  let still = here.branchId === files.at.branchId && here.position === files.at.head;
  if (still) {
    const ws = yield* workspaceOf(tx, session.id, "scope");
    still = (yield* targetFiles(tx, ws, base.target, base.newBranch?.forkCheckpointId ?? null)) === files.manifestId;
  }
  if (still) return;
  throw movedMeanwhile(session.id, `it is at position ${here.position} of branch ${here.branchId}`);
}

/**
 * The refusal of a move planned on what another handle, process or server changed since (`now` says what), which
 * `isReplannable` recognizes unless `replan` is false (a journaled move's own files step: calling it again continues):
 * the move is planned again on what it left.
 */
export function movedMeanwhile(sessionId: string, now: string, replan = true): ConflictError {
  const error = new ConflictError(
    `session ${JSON.stringify(sessionId)} moved while this move was planned (another handle, process or server moved ` +
      `it or wrote to it: ${now}); nothing was moved, try again`,
    "MOVE_IN_PROGRESS",
  );
  if (replan) replannable.add(error);
  return error;
}
