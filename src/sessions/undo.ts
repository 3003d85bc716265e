// undo: the session goes back to where its last move (rollback, switch, edit) left from; the world follows.
import type { MoveOptions } from "../models/inputs.js";
import type { MoveResult } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { moveInHistory } from "./moves/history-move.js";

/** Takes back the session's last standing move; `ConflictError` `NOTHING_TO_UNDO` when there is none. */
export async function undo(ctx: EngineContext, ref: SessionRef, options?: MoveOptions): Promise<MoveResult> {
  return moveInHistory(ctx, ref, "undo", options);
}
