// The LangGraph checkpoints at one point of the tree that a user's checkpoint there holds: its own lineage's only.
import type { CheckpointRow, LgPointRow, Step, Tx } from "../../store/port/index.js";

/**
 * Those of `points` (all at `position`) on the lineage of user checkpoint `at` as it was taken: its branch's written
 * up to it, then those of each branch its lineage forks from at or past `position`, written up to the checkpoint
 * forked from. Another branch's (one rolled back from, whose step went on past the wait) is not the lineage's.
 */
export function* pointsOnLineage(tx: Tx, points: LgPointRow[], at: CheckpointRow, position: number): Step<LgPointRow[]> {
  const on: LgPointRow[] = [];
  let branchId: string | null = at.branchId;
  let cut: number = at.seq;
  while (branchId !== null) {
    const here: string = branchId;
    on.push(...points.filter((p) => p.branchId === here && p.seq <= cut));
    const branch = yield* tx.getBranch(here);
    if (!branch || branch.forkPosition < position) break;
    // A fork with no checkpoint (an edit's) cuts nothing: its parent's checkpoints there came before it.
    cut = branch.forkCheckpointId === null ? Infinity : ((yield* tx.getCheckpoint(branch.forkCheckpointId))?.seq ?? Infinity);
    branchId = branch.parentId;
  }
  return on;
}
