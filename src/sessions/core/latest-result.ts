// The result a call's next undo gets when a move marks it applied again without running it (its effect came back with
// restored files): that of its most recent application.
import type { Step, ToolRow, Tx } from "../../store/port/index.js";

/**
 * The result of `row`'s most recent application, for marking it applied again: its newest replay's (kept past `prune`
 * of the move that ran it), else its own run's. A replay's result depends on the world it ran in (an append's size
 * before it), and restored files hold that world.
 */
export function* latestResult(tx: Tx, sessionId: string, row: ToolRow): Step<string | null> {
  const replay = yield* tx.lastReplay(sessionId, row.id);
  return replay === undefined ? row.result : replay.result;
}
