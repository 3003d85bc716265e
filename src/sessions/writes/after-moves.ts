// Writes on a session's current branch come after its stopped moves, never onto the branch such a move is leaving.
import type { EngineContext, SessionRef } from "../core/context.js";
import { ownedCurrent } from "../core/owned.js";
import type { Tx } from "../../store/port/index.js";
import { insideHandler } from "../../tools/handler-scope.js";
import { isResumableRefusal, refuseStoppedMoves } from "../moves/refusals.js";
import { recoverMoves } from "../moves/recovery.js";

/**
 * `ownedCurrent` for a unit that writes on the current branch: refused `MOVE_IN_PROGRESS` while a move of the session
 * stopped midway (its process killed, or its connection lost) and runs nowhere; finishing it makes another branch
 * current, so what is written now would leave the conversation then. The session's read says whether a move is
 * unfinished in the same statement: a session with none pays no other read.
 */
export function* currentToWrite(ctx: EngineContext, tx: Tx, sessionId: string, userId: string) {
  const current = yield* ownedCurrent(tx, sessionId, userId);
  if (current.session.moving === true) yield* refuseStoppedMoves(ctx, tx, sessionId);
  return current;
}

/**
 * Runs `write` (a unit reading `currentToWrite`) after finishing the session's stopped moves, as a tool call does:
 * refused, it resumes them (recovery claims each in a transaction) and writes once more. The refusal stands when they
 * cannot be finished here (a tool not registered, an undo failing again), and from inside a tool handler.
 */
export function afterMoves<T>(ctx: EngineContext, ref: Pick<SessionRef, "id">, write: () => Promise<T>): Promise<T> {
  // The usual write's own promise: no extra step on the way when no move is in it.
  return write().catch(async (error: unknown) => {
    if (!isResumableRefusal(error) || insideHandler()) throw error;
    const report = await recoverMoves(ctx, { sessionId: ref.id });
    if (report.resumed.length === 0) throw report.failed[0]?.error ?? error;
    return write();
  });
}
