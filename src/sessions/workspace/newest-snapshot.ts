// The snapshot a move with files restores when its target has none of its own: the newest on the target's lineage
// whose files hold no call a files-only restore set aside there since (restoring it would bring that call back).
import type { CheckpointFilesRow, LineageSegment, Step, Tx } from "../../store/port/index.js";
import { asideOnLineage, heldOff, notHeld, snapshotHolds } from "./unapplied.js";

/** A snapshot on a target's lineage: where it was taken, and its files' row. */
export interface SnapshotOnLineage {
  position: number;
  files: CheckpointFilesRow;
}

/**
 * The newest checkpoint with files on the lineage of `target` at or before its position that holds none of the calls
 * set aside on a branch of that lineage (see `setAsideThrough`); the newest of all when each holds one, as the files
 * the target had are then stored nowhere. Undefined when no checkpoint there captured files.
 */
export function* newestSnapshot(
  tx: Tx,
  sessionId: string,
  target: { branchId: string; position: number },
): Step<SnapshotOnLineage | undefined> {
  const segments = yield* tx.lineage(target.branchId, target.position);
  const aside = yield* setAsideThrough(tx, sessionId, segments);
  let newest: SnapshotOnLineage | undefined;
  for (let i = segments.length - 1; i >= 0; i--) {
    const s = segments[i]!;
    for (let upTo = s.upTo; upTo >= s.after;) {
      const position = yield* tx.lastFilesPosition(s.branchId, s.after, upTo);
      if (position === undefined) break;
      const found = { position, files: (yield* tx.lastCheckpointFiles(s.branchId, position, position))! };
      if (aside.length === 0 || !holdsAny(segments, found, aside)) return found;
      newest ??= found;
      upTo = position - 1;
    }
  }
  return newest;
}

/** The calls a files-only restore set aside on a branch of the lineage and nothing applied since, with where each sits. */
function* setAsideThrough(
  tx: Tx,
  sessionId: string,
  segments: readonly LineageSegment[],
): Step<{ id: string; branchId: string; position: number }[]> {
  const out: { id: string; branchId: string; position: number }[] = [];
  for (const id of yield* asideOnLineage(tx, yield* tx.setAsideCalls(sessionId), { segments })) {
    const call = yield* tx.getTool(id);
    if (call) out.push({ id: call.id, branchId: call.branchId, position: call.position });
  }
  return out;
}

function holdsAny(
  segments: readonly LineageSegment[],
  found: SnapshotOnLineage,
  calls: readonly { id: string; branchId: string; position: number }[],
): boolean {
  const upTo = segments.map((s) => ({ ...s, upTo: Math.min(s.upTo, found.position) })).filter((s) => s.upTo > s.after);
  const at = { unapplied: notHeld(found.files), held: heldOff(found.files) };
  return calls.some((c) => snapshotHolds(upTo, at, c));
}
