// What a files-only restore does to the tool track: the calls it marks applied and unapplied, journaled with the restore.
import type { Step, Tx } from "../../store/port/index.js";
import { heldOtherwise, markHeld } from "../core/latest-result.js";
import { headOf } from "../core/head.js";
import type { AsideLineage } from "./unapplied.js";

/**
 * The calls a files-only restore makes applied (`mark`: the restored snapshot holds their effect) and unapplied
 * (`unmark`: it does not), planned before any file moves and carried in the restore's journal, so that the restore's
 * end, or recovery finishing it after a crash, applies it in the transaction that clears the journal.
 */
export interface TrackPlan {
  mark: string[];
  unmark: string[];
  /** The marked calls whose application the snapshot holds was a replay: its `applied_seq` (absent in older journals). */
  replays?: Record<string, number>;
}

/**
 * Applies a files-only restore's track plan. Each call changes only when it is not already as planned: applied again
 * with the result of the application the snapshot holds (also when applied now by another one), as a move's restore
 * marks the calls its snapshot holds; unapplied and set aside (the conversation keeps it, the world does not).
 */
export function* applyTrackPlan(tx: Tx, sessionId: string, plan: TrackPlan, at: number): Step<void> {
  // Set aside on the branch the conversation stays on, at its head: moves to lineages through it past there keep them out.
  const on = plan.unmark.length === 0 ? undefined : yield* currentHead(tx, sessionId);
  for (const id of plan.unmark) {
    const row = yield* tx.getTool(id);
    if (row && row.appliedSeq !== null) {
      yield* tx.unmarkApplied(id);
      if (on) yield* tx.setAside(id, sessionId, on.branchId, on.position, at);
    }
  }
  // Once one is marked, those after it (applied after it when the snapshot was taken) are marked again after it.
  let marking = false;
  let through: AsideLineage | undefined;
  for (const id of plan.mark) {
    const row = yield* tx.getTool(id);
    if (row && (marking || row.appliedSeq === null || (yield* heldOtherwise(tx, row, plan.replays?.[id])))) {
      // Applied again on the lineage the conversation stays on: set aside on another branch, it stays out there.
      through ??= yield* currentLineage(tx, sessionId);
      yield* markHeld(tx, sessionId, row, plan.replays?.[id], at, through);
      marking = true;
    }
  }
}

function* currentLineage(tx: Tx, sessionId: string): Step<AsideLineage> {
  const session = yield* tx.getSession(sessionId);
  return { segments: session ? yield* tx.lineage(session.currentBranchId) : [] };
}

function* currentHead(tx: Tx, sessionId: string): Step<{ branchId: string; position: number } | undefined> {
  const session = yield* tx.getSession(sessionId);
  const branch = session && (yield* tx.getBranch(session.currentBranchId));
  return branch && { branchId: branch.id, position: (yield* headOf(tx, branch)).position };
}
