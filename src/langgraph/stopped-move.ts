// A thread whose session's last move stopped midway (a failing undo or replay under the "stop" policy): the calls it
// undid are still on the session's current lineage, so the head would show results whose calls the world lacks.
import { ConflictError } from "../models/errors.js";
import { entryAt } from "../sessions/langgraph-bridge.js";
import type { Step, Tx } from "../store/port/index.js";

/**
 * Refuses (`MOVE_IN_PROGRESS`, as the core names an unfinished move) a read of the thread's head while the session's
 * newest move stopped ("failed") having undone calls its current lineage still holds, not applied since: a run would
 * go on from results whose calls are undone. Calling the move again finishes it (another move, which replays or
 * leaves them, ends it too).
 */
export function* refuseStoppedMove(tx: Tx, sessionId: string, threadId: string): Step<void> {
  const last = yield* tx.lastMove(sessionId);
  if (last?.status !== "failed") return;
  const session = yield* tx.getSession(sessionId);
  const branch = session ? yield* tx.getBranch(session.currentBranchId) : undefined;
  if (!branch) return;
  const applied = new Set((yield* tx.appliedCalls(sessionId)).map((c) => c.id));
  for (const step of yield* tx.moveSteps(last.id)) {
    if (step.op !== "undo" || step.status !== "done" || applied.has(step.entryId)) continue;
    const entry = yield* tx.getEntry(step.entryId);
    if (entry && (yield* entryAt(tx, branch, entry.position))?.id === entry.id) throw stoppedMove(threadId, last.id);
  }
}

const stoppedMove = (threadId: string, moveId: string) =>
  new ConflictError(
    `thread ${threadId}: a move of its session stopped midway (${moveId}, an undo or replay failed) and undid calls ` +
      "whose results the thread's head still holds: call that move again to finish it (or make another move) before " +
      "the graph goes on",
    "MOVE_IN_PROGRESS",
  );
