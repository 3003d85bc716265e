// Undo and redo as moves: back to where the last move left from, or on to where the last undone one went.
import type { SessionRow, Step, Tx } from "../../store/port/index.js";
import type { BaseMoveSpec } from "./move-spec.js";
import { ConflictError, ValidationError } from "../../models/errors.js";
import type { MoveOptions } from "../../models/inputs.js";
import type { MoveResult } from "../../models/types.js";
import type { EngineContext, SessionRef } from "../core/context.js";
import { headOf } from "../core/head.js";
import { performMove } from "./move.js";

/**
 * Moves the session along its own move history, read in the move's transaction (so two servers cannot take the same
 * move back): undo goes to the head of the branch the last standing move left, redo to the head of the branch the
 * oldest undone move went to. A branch appended to since is entered at its head, as `switchBranch` does.
 */
export async function moveInHistory(ctx: EngineContext, ref: SessionRef, op: "undo" | "redo", options?: MoveOptions): Promise<MoveResult> {
  // Undo and redo move the conversation: files alone would leave the history out of step with the session.
  if (options && typeof options === "object" && options.scope === "files")
    throw new ValidationError("scope", `${op} moves the conversation: use "conversation" or "both"`);
  return performMove(ctx, ref, "switch", options, (tx, session) => moveInHistoryUnit(tx, session, op), undefined, { verb: op, args: null });
}

function* moveInHistoryUnit(tx: Tx, session: SessionRow, op: "undo" | "redo"): Step<BaseMoveSpec> {
  const row = op === "undo" ? yield* tx.moveToUndo(session.id) : yield* tx.moveToRedo(session.id);
  if (!row)
    throw op === "undo"
      ? new ConflictError("nothing to undo: the session has made no move (rollback, switch, edit) that stands", "NOTHING_TO_UNDO")
      : new ConflictError("nothing to redo: no move was undone since the last move", "NOTHING_TO_REDO");
  const branch = (yield* tx.getBranch(op === "undo" ? row.fromBranchId : row.toBranchId))!;
  return {
    kind: "switch",
    sessionId: session.id,
    userId: session.userId,
    target: { branchId: branch.id, position: (yield* headOf(tx, branch)).position },
    newBranch: null,
    edit: null,
    history: { op, ref: row.ref, kind: row.kind },
  };
}
