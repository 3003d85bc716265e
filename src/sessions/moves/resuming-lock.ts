// The session lock, lifting refusals this thread caused itself by resuming its own interrupted move first.
import { insideHandler } from "../../tools/handler-scope.js";
import { queuedWrites } from "../core/write-queue.js";
import type { EngineContext } from "../core/context.js";
import { isOwnRestoreRefusal } from "../workspace/restore-guards.js";
import { settledFor } from "../workspace/resume-own.js";
import { isResumableRefusal } from "./refusals.js";
import { recoverMoves } from "./recovery.js";

/**
 * A call refused `MOVE_IN_PROGRESS` only for this thread's own move (or workspace restore) that stopped midway (a unit
 * of it failed on a lost connection, a file could not be written) resumes that move or finishes that restore, then
 * runs once more, so an agent loop goes on once the cause is gone instead of waiting for someone's `fp.recover()`. Not
 * from inside a tool handler (resuming would wait on the lock its caller holds), nor for recovery itself.
 */
export function resumingOwnMoves(lock: EngineContext["withSessionLock"], engine: () => EngineContext): EngineContext["withSessionLock"] {
  return async (sessionId, fn, mode, call) => {
    // After this handle's writes waiting on a move of the session: they were made first (see write-queue.ts).
    const queued = call === "recover" || insideHandler() ? undefined : queuedWrites(engine().events, sessionId);
    if (queued) await queued;
    try {
      return await lock(sessionId, fn, mode, call);
    } catch (error) {
      if (call === "recover" || insideHandler() || !(isResumableRefusal(error) || isOwnRestoreRefusal(error))) throw error;
      const report = await recoverMoves(engine(), { sessionId });
      // Finishing it failed (it stopped, as under the stop policy): why is what the caller needs, not who began it.
      if (report.resumed.length === 0 && !settledFor(report.workspaces, sessionId)) throw report.failed[0]?.error ?? error;
      return lock(sessionId, fn, mode, call);
    }
  };
}
