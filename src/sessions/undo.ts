// undo: the session goes back to where its last move (rollback, switch, edit) left from; the world follows.
import { ConflictError } from "../models/errors.js";
import type { MoveOptions } from "../models/inputs.js";
import type { MoveResult } from "../models/types.js";
import type { SessionRow, Step, Tx } from "../store/port/index.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { historyMoveSpec, refuseFilesOnly } from "./moves/history-move.js";
import type { BaseMoveSpec } from "./moves/move-spec.js";
import { performMove } from "./moves/move.js";
import { refuseUnfinishedMoves } from "./moves/refusals.js";

/** Takes back the session's last standing move; `ConflictError` `NOTHING_TO_UNDO` when there is none. */
export async function undo(ctx: EngineContext, ref: SessionRef, options?: MoveOptions): Promise<MoveResult> {
  refuseFilesOnly("undo", options);
  return performMove(ctx, ref, "switch", options, (tx, session) => undoSpec(ctx, tx, session), undefined, { verb: "undo", args: null });
}

/** Back to the head of the branch the last standing move left from. */
function* undoSpec(ctx: EngineContext, tx: Tx, session: SessionRow): Step<BaseMoveSpec> {
  const row = yield* tx.moveToUndo(session.id);
  // A move under way (another handle's, process's or server's) is not done: "nothing to undo" is no answer yet.
  if (!row) yield* refuseUnfinishedMoves(ctx, tx, session.id);
  if (!row)
    throw new ConflictError("nothing to undo: the session has made no move (rollback, switch, edit) that stands", "NOTHING_TO_UNDO");
  return yield* historyMoveSpec(tx, session, "undo", row, row.fromBranchId);
}
