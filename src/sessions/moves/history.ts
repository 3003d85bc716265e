// The session's own move history (what undo and redo walk), and where the session is as a move sees it.
import { ConflictError } from "../../models/errors.js";
import type { BranchMove, SessionRow, Step, Tx } from "../../store/port/index.js";
import { commonPrefix } from "../log/lineage.js";
import { landingBranch } from "./continued.js";
import type { MoveTarget } from "./move-plan.js";
import type { MoveSpec } from "./move-spec.js";

/** Positions read in a unit, by the session row they were read with (a row is read anew by each unit). */
const positions = new WeakMap<SessionRow, MoveTarget>();

/** The session's position: its current branch's head (read once per session row: a move asks twice). */
export function* sessionPosition(tx: Tx, session: SessionRow): Step<MoveTarget> {
  const known = positions.get(session);
  if (known) return known;
  // A branch with no entry of its own yet is at its fork position: its fork entry need not be read.
  const here = { branchId: session.currentBranchId, position: (yield* tx.headPosition(session.currentBranchId))! };
  positions.set(session, here);
  return here;
}

/**
 * True when `target` is the session's position: the current head, on the current lineage. Nothing written since a
 * rollback to `target` (no message, state or tool entry after it) leaves the head there, so a second click lands here.
 */
export function* isSessionPosition(tx: Tx, session: SessionRow, target: MoveTarget): Step<boolean> {
  const here = yield* sessionPosition(tx, session);
  if (target.position !== here.position) return false;
  if (target.branchId === here.branchId) return true;
  const shared = commonPrefix(
    yield* tx.lineage(here.branchId),
    yield* tx.lineage(target.branchId, target.position),
    here.position,
    target.position,
  );
  return shared === here.position;
}

/** The event a finished move emits: undo and redo have their own (the `undo` event is a tool call a move undid). */
export function moveEvent(spec: MoveSpec): "rollback" | "edit" | "switch" | "undoMove" | "redoMove" {
  if (spec.history) return spec.history.op === "undo" ? "undoMove" : "redoMove";
  return spec.kind;
}

/**
 * In the transaction that finishes a move to `to`: an undo or redo marks its history row (and shows in the timeline);
 * any other move that changed the branch becomes the newest row, leaving nothing to redo (a failed guarded block's own
 * rollback, `unrecorded`, is no row: the user did not make it). A move recorded on the branch it made is not written
 * here: its ref is returned, for `setCurrentBranch` to write with the session row.
 */
export function* recordInHistory(
  tx: Tx,
  spec: MoveSpec,
  to: MoveTarget,
  at: number,
  keepUndone = false,
  journaled = false,
): Step<string | undefined> {
  if (spec.history) {
    const { op, ref, kind, ends } = spec.history;
    // The per-session write lock already serializes undo and redo; this catches a history changed under the move.
    if (!(yield* tx.setMoveUndone(spec.sessionId, ref, op, ends))) {
      if (!journaled || !spec.from)
        throw new ConflictError(
          `the move to ${op} was ${op === "undo" ? "undone" : "redone"} meanwhile`,
          op === "undo" ? "NOTHING_TO_UNDO" : "NOTHING_TO_REDO",
        );
      // Its steps ran (files restored, calls undone): it lands, as the switch it is, which undo takes back. Refused
      // here, it would stay journaled, and every later move of the session would be refused over it.
      yield* insertSwitchEvent(tx, spec.sessionId, to.branchId, at);
      return yield* recordInHistory(tx, { ...spec, history: undefined, kind: "switch" }, to, at, keepUndone);
    }
    yield* tx.insertEvent({
      sessionId: spec.sessionId,
      kind: op,
      refId: to.branchId,
      branchId: to.branchId,
      detail: op === "undo" ? `undid ${kind}: back to branch ${to.branchId}` : `redid ${kind}: to branch ${to.branchId}`,
      createdAt: at,
    });
    return;
  }
  if (!spec.from || spec.unrecorded) return;
  if (spec.from.branchId === to.branchId) return yield* recordStay(tx, spec.sessionId, spec.kind, to, at);
  if (spec.newBranch !== null && spec.newBranch.id === to.branchId) return to.branchId;
  yield* tx.recordMove(
    {
      sessionId: spec.sessionId,
      kind: spec.kind,
      fromBranchId: spec.from.branchId,
      fromPosition: spec.from.position,
      toBranchId: to.branchId,
      toPosition: to.position,
      createdAt: at,
    },
    keepUndone,
  );
  return undefined;
}

/** The timeline's event of a switch to `branchId`. */
export function* insertSwitchEvent(tx: Tx, sessionId: string, branchId: string, at: number): Step<void> {
  yield* tx.insertEvent({ sessionId, kind: "switch", refId: branchId, branchId, detail: `switched to branch ${branchId}`, createdAt: at });
}

/**
 * A rollback or switch that leaves the session on its branch (at its target already, or the world put back in step
 * with it): a row of its own, from and to where the session is, so the next undo takes back this one (staying put), not
 * an older move the user did not just make. None for a second click (the newest standing move is of the same kind and
 * the session is still where it landed: undo takes that move back), when no move stands (undo has nothing to take back
 * either way), or when something is to redo (undo goes on walking back, and the redo stays).
 */
export function* recordStay(tx: Tx, sessionId: string, kind: string, here: MoveTarget, at: number): Step<undefined> {
  const last = yield* tx.moveToUndo(sessionId);
  if (!last || (last.kind === kind && last.toPosition === here.position && (yield* landedHere(tx, last.toBranchId, here)))) return;
  if (yield* tx.moveToRedo(sessionId)) return;
  yield* tx.recordMove({
    sessionId,
    kind,
    fromBranchId: here.branchId,
    fromPosition: here.position,
    toBranchId: here.branchId,
    toPosition: here.position,
    createdAt: at,
  });
  return undefined;
}

/**
 * Whether a move that landed on `branchId` left the session `here`: on that branch, or on the branch continuing it
 * since a failed guarded block wrote there (the block is as if it never ran, so a second click is still one).
 */
function* landedHere(tx: Tx, branchId: string, here: MoveTarget): Step<boolean> {
  if (branchId === here.branchId) return true;
  const branch = yield* tx.getBranch(branchId);
  if (!branch) return false;
  // Nothing written since: the continuing branch still at its fork, where the block began (the move's landing).
  const landing = yield* landingBranch(tx, branch);
  return landing.id === here.branchId && landing.forkPosition === here.position;
}

/**
 * The move a new branch records on its own row (so a rollback or edit writes no row for it): where the session left
 * from, and the branch's position after the move (its fork position, or the edited message's).
 */
export function branchMove(spec: MoveSpec): BranchMove | undefined {
  if (!spec.newBranch || !spec.from || spec.history || spec.unrecorded) return undefined;
  return {
    kind: spec.kind,
    fromBranchId: spec.from.branchId,
    fromPosition: spec.from.position,
    toPosition: spec.newBranch.forkPosition + (spec.edit ? 1 + (spec.edit.carried?.length ?? 0) : 0),
  };
}
