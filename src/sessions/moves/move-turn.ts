// A move holds its session's workspace's run turn (see run-turns.ts) from its planning to its end: a call or checkpoint
// of another handle of this process on that directory then comes wholly before it or after it, never between the files
// it read and those it restores (a file kept then holds the call's effect while the track says otherwise).
import type { EngineContext } from "../core/context.js";
import { takeRunTurn } from "../workspace/run-turns.js";

/**
 * Runs `fn` (a move, planned again inside) holding the run turn of `dir`. Its planning refused first what holds the
 * turn for long (a live call, a move running its tools), so the wait is for a checkpoint's capture or a call ending.
 */
export async function inRunTurn<T>(ctx: EngineContext, dir: string, fn: () => Promise<T>): Promise<T> {
  const turn = await takeRunTurn(dir, ctx.closing);
  try {
    return await turn.within(fn);
  } finally {
    turn.release();
  }
}
