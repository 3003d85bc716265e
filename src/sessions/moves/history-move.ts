// Undo and redo as moves: the spec of a move along the session's own move history, to the head of a branch it names.
import { ValidationError } from "../../models/errors.js";
import type { MoveOptions } from "../../models/inputs.js";
import { readingInput } from "../../models/json.js";
import type { MoveHistoryRow, SessionRow, Step, Tx } from "../../store/port/index.js";
import { headOf } from "../core/head.js";
import { forkLandingSpec, landingOf } from "./continued.js";
import { sessionPosition } from "./history.js";
import type { BaseMoveSpec } from "./move-spec.js";

/** Undo and redo move the conversation: files alone would leave the history out of step with the session. */
export function refuseFilesOnly(op: "undo" | "redo", options: MoveOptions | undefined): void {
  // Read as the caller wrote it: a getter or proxy trap that throws is a ValidationError, as in the options' parse.
  if (readingInput(() => options && typeof options === "object" && options.scope === "files", "options"))
    throw new ValidationError("scope", `${op} moves the conversation: use "conversation" or "both"`);
}

/**
 * The move to `branchId`'s head that takes `row` back (undo) or does it again (redo), read in the move's transaction
 * (so two servers cannot take the same move back). A branch appended to since is entered at its head, as
 * `switchBranch` does.
 */
export function* historyMoveSpec(
  tx: Tx,
  session: SessionRow,
  op: "undo" | "redo",
  row: MoveHistoryRow,
  branchId: string,
): Step<BaseMoveSpec> {
  // Off the move's own end (a failed guarded block's rollback, not a move of the history, moved the session): the op
  // records where the session is, so the next op on this move comes back here, not to what the block left behind. A
  // move that stayed (from and to one place) stays here both ways: taking it back or doing it again leaves the session.
  const end = op === "undo" ? row.toBranchId : row.fromBranchId;
  const here = session.currentBranchId === end ? undefined : yield* sessionPosition(tx, session);
  const stay = row.fromBranchId === row.toBranchId;
  const ends = !here ? undefined : stay ? { from: here, to: here } : op === "undo" ? { to: here } : { from: here };
  // A failed guarded block's branch, its head as the block left it, is entered where the block never ran.
  const landing = yield* landingOf(tx, (yield* tx.getBranch(here && stay ? here.branchId : branchId))!);
  const branch = landing.branch;
  const history = { op, ref: row.ref, kind: row.kind, ...(ends ? { ends } : {}) };
  if (landing.continues) {
    return { ...forkLandingSpec(session, branch, landing.continues), history };
  }
  return {
    kind: "switch",
    sessionId: session.id,
    userId: session.userId,
    target: { branchId: branch.id, position: (yield* headOf(tx, branch)).position },
    newBranch: null,
    edit: null,
    history,
  };
}
