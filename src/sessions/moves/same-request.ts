// A move retried with its request id while the first attempt still runs elsewhere (another handle, process or server)
// waits for it and answers as it did, instead of being refused MOVE_IN_PROGRESS.
import { ConflictError } from "../../models/errors.js";
import type { Step, Tx } from "../../store/port/index.js";
import { Backoff } from "../core/backoff.js";
import type { EngineContext } from "../core/context.js";
import { inflightMoves } from "../core/ownership.js";

/** How long a move waits for the running move made with its own request id before it is refused (ms). */
export const SAME_REQUEST_WAIT_MS = 60_000;

/**
 * Runs `move`; while it is refused `MOVE_IN_PROGRESS` for a running move journaled with `requestId`, waits (20 ms, then
 * doubling up to 500 ms, at most `SAME_REQUEST_WAIT_MS` in all) and runs it again: once the first attempt finishes,
 * the ledger answers. Any other refusal, and one past the bound, is thrown as it is.
 */
export async function awaitingSameRequest<T>(
  ctx: EngineContext,
  sessionId: string,
  requestId: string | undefined,
  move: () => Promise<T>,
): Promise<T> {
  if (requestId === undefined) return move();
  const backoff = Backoff.for(SAME_REQUEST_WAIT_MS, 20);
  // Set when the move in the way had ended by the time it was looked for: one more run then answers from the ledger.
  let endedMeanwhile = false;
  for (;;) {
    try {
      return await move();
    } catch (error) {
      if (!(error instanceof ConflictError) || error.code !== "MOVE_IN_PROGRESS") throw error;
      if (!(await ctx.store.read((tx) => runsRequest(ctx, tx, sessionId, requestId)))) {
        if (endedMeanwhile) throw error;
        endedMeanwhile = true;
        // Run again at once, yet counted as a pause.
        backoff.grow();
        continue;
      }
      endedMeanwhile = false;
      if (ctx.closing.aborted || !(await backoff.wait())) throw error;
    }
  }
}

/**
 * Whether a move of the session journaled with `requestId` is running somewhere else: not one of this thread's own that
 * stopped (an interrupted move of its own is resumed, not waited for).
 */
function* runsRequest(ctx: EngineContext, tx: Tx, sessionId: string, requestId: string): Step<boolean> {
  const self = ctx.ownership.self;
  for (const move of yield* tx.runningMoves(sessionId)) {
    const spec = JSON.parse(move.spec) as { request?: { id?: string } };
    if (spec.request?.id !== requestId) continue;
    const ownStopped = move.pid === self.pid && move.pidStart === self.pidStart && !inflightMoves.has(move.id);
    if (!ownStopped) return true;
  }
  return false;
}
