// Another opener's guarded block that ran when a failed block began and has ended since: taken back whole, not cut.
import type { CheckpointRow, SessionRow, Step, Tx } from "../../store/port/index.js";

/** Branches walked up at most (a lineage cannot loop; this bounds a damaged database). */
const MAX_HOPS = 256;

/**
 * The checkpoint a failed guarded block's rollback goes to instead of its own (`checkpointId`): the earliest of
 * `enclosing` (the checkpoints of other blocks running when it began) that ended since, none holding it any more, and
 * sits on its lineage before it. Its writes on both sides of this block's checkpoint are then all taken back, where a
 * rollback to that checkpoint would keep the first part of a block that told its caller it succeeded. A block still
 * running keeps all it writes (its later writes land after the rollback). Undefined when there is none.
 */
export function* endedEnclosingBlock(
  tx: Tx,
  session: SessionRow,
  checkpointId: string,
  enclosing: readonly string[],
): Step<string | undefined> {
  if (enclosing.length === 0) return undefined;
  const own = yield* tx.getCheckpoint(checkpointId);
  if (!own) return undefined;
  const held = new Set(yield* tx.heldCheckpoints(session.id));
  let earliest: CheckpointRow | undefined;
  for (const id of enclosing) {
    if (held.has(id)) continue;
    const cp = yield* tx.getCheckpoint(id);
    if (!cp || cp.sessionId !== session.id || cp.seq >= own.seq || !(yield* onLineageOf(tx, cp, own))) continue;
    if (!earliest || cp.position < earliest.position) earliest = cp;
  }
  return earliest?.id;
}

/** Whether `cp` is on the lineage of `of`, at or before it. */
function* onLineageOf(tx: Tx, cp: CheckpointRow, of: CheckpointRow): Step<boolean> {
  let branchId = of.branchId;
  let upTo = of.position;
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    if (cp.branchId === branchId) return cp.position <= upTo;
    const branch = yield* tx.getBranch(branchId);
    if (!branch?.parentId) return false;
    branchId = branch.parentId;
    upTo = branch.forkPosition;
  }
  return false;
}
