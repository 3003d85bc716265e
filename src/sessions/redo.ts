// redo: the session does its last undone move again (to that move's branch); the world follows.
import type { MoveOptions } from "../models/inputs.js";
import type { MoveResult } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { moveInHistory } from "./moves/history-move.js";

/** Does the last undone move again; `ConflictError` `NOTHING_TO_REDO` when a new move (or none) left nothing to redo. */
export async function redo(ctx: EngineContext, ref: SessionRef, options?: MoveOptions): Promise<MoveResult> {
  return moveInHistory(ctx, ref, "redo", options);
}
