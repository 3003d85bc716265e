// A move takes its session's workspace's run turn (see run-turns.ts) from its planning to its end: a call or checkpoint
// of another handle of this process on that directory then comes wholly before it or after it, never between the files
// it read and those it restores (a file kept then holds the call's effect while the track says otherwise).
import type { Step, Tx } from "../../store/port/index.js";
import type { EngineContext, SessionRef } from "../core/context.js";
import { ownedSession } from "../core/owned.js";
import { takeRunTurn } from "../workspace/run-turns.js";
import { refuseLiveCalls } from "./refusals.js";

/**
 * Runs `fn` (a move of `ref`) holding the run turn of the session's workspace, if it has one. A live call of the
 * session holds that turn until it ends: the move is refused at once, as its planning would refuse it, not after a wait.
 */
export async function inWorkspaceTurn<T>(ctx: EngineContext, ref: SessionRef, fn: () => Promise<T>): Promise<T> {
  const dir = await ctx.store.read((tx) => workspaceDirUnit(ctx, tx, ref));
  if (dir === undefined) return fn();
  const turn = await takeRunTurn(dir, ctx.closing);
  try {
    return await turn.within(fn);
  } finally {
    turn.release();
  }
}

function* workspaceDirUnit(ctx: EngineContext, tx: Tx, ref: SessionRef): Step<string | undefined> {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  if (!session.hasWorkspace) return undefined;
  if (session.hasTools) yield* refuseLiveCalls(ctx, tx, session.id);
  return (yield* tx.getWorkspace(session.id))?.dir;
}
