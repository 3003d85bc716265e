// The session lock, lifting refusals this thread caused itself by resuming its own interrupted move first.
import { insideHandler, servedHandler } from "../../tools/handler-scope.js";
import { orderedCall } from "../core/call-order.js";
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
  return (sessionId, fn, mode, call) => {
    if (call === "recover" || servedHandler(sessionId)) return lock(sessionId, fn, mode, call);
    // After this handle's writes on the session still landing: they were made first (see call-order.ts).
    return orderedCall(engine().events, sessionId, mode !== "shared", async (entered) => {
      const held = () => {
        const running = fn();
        entered();
        return running;
      };
      try {
        return await lock(sessionId, held, mode, call);
      } catch (error) {
        if (insideHandler() || !(isResumableRefusal(error) || isOwnRestoreRefusal(error))) throw error;
        const report = await recoverMoves(engine(), { sessionId });
        // Finishing it failed (it stopped, as under the stop policy): why is what the caller needs, not who began it.
        if (report.resumed.length === 0 && !settledFor(report.workspaces, sessionId)) throw report.failed[0]?.error ?? error;
        return lock(sessionId, held, mode, call);
      }
    });
  };
}
