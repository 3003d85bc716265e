// A call refused only for this thread's own stopped restore of the session's workspace (MOVE_IN_PROGRESS): the restore
// is finished (or its files put back) as `fp.recover()` would, then the call runs once more, so that the handle goes
// on instead of waiting for a restart. Moves get the same from the session lock (forkpoint.ts).
import { insideHandler } from "../../tools/handler-scope.js";
import type { EngineContext } from "../core/context.js";
import { recoverWorkspaces, type WorkspaceRecovery } from "./recovery.js";
import { isOwnRestoreRefusal } from "./restore-guards.js";

/** Whether recovery settled the restore of `sessionId` (finished it, put its files back, or found it drifted). */
export const settledFor = (done: readonly WorkspaceRecovery[], sessionId: string): boolean =>
  done.some((w) => w.sessionId === sessionId && w.outcome !== "waiting" && w.outcome !== "failed");

/** Runs `fn`; refused for this thread's own stopped restore, finishes that restore and runs it again. */
export async function resumingOwnRestore<T>(ctx: EngineContext, sessionId: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (error) {
    // Not from inside a tool handler: finishing takes the session's lock, which its caller holds.
    if (!isOwnRestoreRefusal(error) || insideHandler()) throw error;
    if (!settledFor(await recoverWorkspaces(ctx), sessionId)) throw error;
    return fn();
  }
}
