// What would refuse a rollback, for plan_rollback: the engine's own checks of a restore (drift; and, whatever `force`
// says, a link, a file or folder in the way, a file it does not capture where one goes), run through the handle.
import type { SessionHandle } from "../index.js";
import { ForkpointError } from "../index.js";
import type { Step, Tx } from "../store/port/index.js";
import { sessionEngine } from "../sessions/session-handle.js";
import { restoreCheck, type RestoreCheck } from "../sessions/workspace/prepare-restore.js";
import { sameFilesConfig } from "../sessions/workspace/snapshots.js";
import { keptCallPaths } from "../sessions/moves/failed-undo-files.js";
import { snapshotPosition } from "../sessions/moves/move-files.js";
import { finishStoppedMoves, liveWork } from "../sessions/moves/live-work-planned.js";

function* targetOf(tx: Tx, sessionId: string, checkpointId: string) {
  const ws = yield* tx.getWorkspace(sessionId);
  const files = yield* tx.checkpointManifest(checkpointId);
  return ws && files && sameFilesConfig(files, ws) ? { ws, manifestId: files.manifestId } : null;
}

/**
 * What a rollback to `checkpointId` (one of the session's) would meet: the files changed since forkpoint last saw them
 * that it refuses unless forced, why it would be refused even with force: true (or null), and the new files it leaves
 * alone as its target ignores them. Null as a whole when the check itself is refused (a restore under way): the rollback says it.
 */
export async function rollbackCheck(s: SessionHandle, checkpointId: string): Promise<RestoreCheck | null> {
  try {
    return await sessionEngine(s).run(async (ctx, ref) => {
      const target = await ctx.store.read((tx) => targetOf(tx, ref.id, checkpointId));
      return target ? restoreCheck(ctx, target.ws, target.manifestId) : null;
    });
  } catch (error) {
    if (error instanceof ForkpointError) return null;
    throw error;
  }
}

/**
 * The paths a "both" rollback to checkpoint `cp` leaves as they are, whatever the checkpoint holds: those the applied
 * irreversible calls its files do not hold recorded (their effect stays out there, so the move keeps them), and those
 * of calls a crash left of unknown outcome (see `keptCallPaths`). Empty when it cannot be read (a restore under way).
 */
export async function keptByRollback(s: SessionHandle, cp: { id: string; branchId: string; position: number }): Promise<string[]> {
  try {
    return await sessionEngine(s).run((ctx, ref) =>
      ctx.store.read((tx) => keptUnit(tx, ref.id, cp, (tool) => ctx.tools.isReversible(tool))),
    );
  } catch (error) {
    if (error instanceof ForkpointError) return [];
    throw error;
  }
}

function* keptUnit(
  tx: Tx,
  sessionId: string,
  cp: { id: string; branchId: string; position: number },
  isReversible: (tool: string) => boolean,
): Step<string[]> {
  const target = { branchId: cp.branchId, position: cp.position };
  return yield* keptCallPaths(tx, isReversible, sessionId, target, yield* snapshotPosition(tx, sessionId, target, cp.id));
}

/**
 * The code a rollback of the session is refused with for now, whatever it would do: a move under way that may still
 * run (`MOVE_IN_PROGRESS`, after the wait), else a tool call another process or server runs (`CALL_IN_PROGRESS`).
 */
export async function refusedForNow(s: SessionHandle): Promise<"MOVE_IN_PROGRESS" | "CALL_IN_PROGRESS" | null> {
  const { calls, moves, stopped } = await sessionEngine(s).run((ctx, ref) => ctx.store.read((tx) => liveWork(ctx, tx, ref.id)));
  // A stopped move the plan could not finish is in the way as one under way is (the server finishes it when it can).
  return moves.length + stopped.length > 0 ? "MOVE_IN_PROGRESS" : calls.length > 0 ? "CALL_IN_PROGRESS" : null;
}

/** Finishes the session's moves that stopped midway and run nowhere (see `finishStoppedMoves`); a failure stays for the plan to say. */
export async function finishStopped(s: SessionHandle): Promise<void> {
  try {
    await sessionEngine(s).run((ctx, ref) => finishStoppedMoves(ctx, ref.id));
  } catch (error) {
    if (!(error instanceof ForkpointError)) throw error;
  }
}
