// redo: the session does its last undone move again (to that move's branch); the world follows.
import { ConflictError } from "../models/errors.js";
import type { MoveOptions } from "../models/inputs.js";
import type { MoveResult } from "../models/types.js";
import type { SessionRow, Step, Tx } from "../store/port/index.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { historyMoveSpec, refuseFilesOnly } from "./moves/history-move.js";
import type { BaseMoveSpec } from "./moves/move-spec.js";
import { performMove } from "./moves/move.js";
import { refuseUnfinishedMoves } from "./moves/refusals.js";

/** Does the last undone move again; `ConflictError` `NOTHING_TO_REDO` when a new move (or none) left nothing to redo. */
export async function redo(ctx: EngineContext, ref: SessionRef, options?: MoveOptions): Promise<MoveResult> {
  refuseFilesOnly("redo", options);
  return performMove(ctx, ref, "switch", options, (tx, session) => redoSpec(ctx, tx, session), undefined, { verb: "redo", args: null });
}

/** On to the head of the branch the oldest undone move went to. */
function* redoSpec(ctx: EngineContext, tx: Tx, session: SessionRow): Step<BaseMoveSpec> {
  const row = yield* tx.moveToRedo(session.id);
  // A move under way (another handle's, process's or server's) is not done: "nothing to redo" is no answer yet.
  if (!row) yield* refuseUnfinishedMoves(ctx, tx, session.id);
  if (!row) throw new ConflictError("nothing to redo: no move was undone since the last move", "NOTHING_TO_REDO");
  return yield* historyMoveSpec(tx, session, "redo", row, row.toBranchId);
}
