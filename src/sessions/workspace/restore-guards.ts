// What a restore in progress leaves in the database (its journal), and the refusals it and running moves cause.
import { ConflictError } from "../../models/errors.js";
import type { Step, Tx, WorkspaceRow } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { SELF_START, isAlive } from "../core/process-identity.js";
import type { TrackPlan } from "./track-plan.js";

/** Sessions whose workspace this process is restoring right now (recovery must not take such a restore over). */
export const inflightRestores = new Set<string>();

/** Whether a journal (`workspaces.restoring`) is this thread's own, and no restore of it runs here now. */
export function ownStoppedRestore(sessionId: string, restoring: string): boolean {
  const journal = JSON.parse(restoring) as Pick<RestoreJournal, "pid" | "pidStart">;
  return journal.pid === process.pid && journal.pidStart === SELF_START && !inflightRestores.has(sessionId);
}

/**
 * Whether a journal's restore runs nowhere: this thread's own, stopped (see `ownStoppedRestore`), or one whose process
 * died (killed midway while this one served the same workspace). Recovery checks again, and leaves another host's.
 */
function stoppedRestore(sessionId: string, restoring: string): boolean {
  const journal = JSON.parse(restoring) as Pick<RestoreJournal, "pid" | "pidStart">;
  return ownStoppedRestore(sessionId, restoring) || (!inflightRestores.has(sessionId) && !isAlive(journal.pid, journal.pidStart));
}

/**
 * Refusals this thread can lift itself: the restore in the way runs nowhere (it failed midway, and could not be taken
 * back, or its process lost the database before clearing its journal, or died), so finishing it now (`fp.recover()`'s
 * workspace step) writes nothing twice.
 */
const resumable = new WeakSet<Error>();

/** Whether `error` refused a call only for a stopped restore (see `resumable`). */
export const isOwnRestoreRefusal = (error: unknown): boolean => error instanceof Error && resumable.has(error);

/** Clears the restore journal: the move it belonged to is over (done, or refused with nothing moved). */
export async function endRestore(ctx: EngineContext, sessionId: string): Promise<void> {
  await ctx.store.write({ sessionId }, (tx) => tx.setWorkspaceRestoring(sessionId, null));
}

/** What `workspaces.restoring` holds while a restore runs. */
export interface RestoreJournal {
  /** The files being written, and those the directory held before. */
  manifestId: number;
  fromManifestId: number;
  /** "both": the conversation moves after the files; recovery checks whether it did. */
  scope: "files" | "both";
  fromBranchId: string;
  fromHead: number;
  /** The thread writing it now, and every process that staged files for it (their leftovers carry the pid). */
  pid: number;
  pidStart: string;
  pids: number[];
  /** "files": the calls the restored files hold or not, marked so when the restore ends (absent: none change). */
  track?: TrackPlan;
  /** Paths the restore leaves as they are (see drift-in-move.ts): recovery does not write them either. */
  leave?: string[];
  /** The journaled move whose files step this is; null: a "files" restore. Absent from journals written before it was kept. */
  move?: string | null;
}

/** A ConflictError while a restore of the workspace is interrupted or running: recovery must finish it first. */
export function assertNoRestorePending(ws: WorkspaceRow): void {
  if (ws.restoring) {
    const stopped = stoppedRestore(ws.sessionId, ws.restoring);
    const { pid } = JSON.parse(ws.restoring) as Pick<RestoreJournal, "pid">;
    const error = new ConflictError(
      stopped
        ? `a restore of the workspace ${ws.dir} was interrupted: fp.recover() finishes it (opening the database does too)`
        : `a restore of the workspace ${ws.dir} is running (process ${pid}); try again when it ends, or call fp.recover() if its process died`,
      "MOVE_IN_PROGRESS",
    );
    if (stopped) resumable.add(error);
    throw error;
  }
}

/**
 * A ConflictError while a move of the session's world runs its tools (in any process): their undo and replay handlers
 * change these files, and a restore under them would overwrite what they do, or be taken for drift. `ownMove` (the
 * move the restore is a step of, which runs no tool meanwhile) does not count.
 */
export function* assertNoMoveRunning(tx: Tx, ws: WorkspaceRow, ownMove?: string): Step<void> {
  const running = (yield* tx.runningMoves(ws.sessionId)).filter((m) => m.id !== ownMove);
  if (running.length === 0) return;
  throw new ConflictError(
    `a move of this session is under way (${running.map((m) => `${m.id}, process ${m.pid}`).join("; ")}) and its tools change the workspace ${ws.dir}; ` +
      "try again when it ends, or call fp.recover() if its process died",
    "MOVE_IN_PROGRESS",
  );
}
