// The branch row a move forks: its id chosen up front, its time set when the move finishes.
import { newId } from "../../models/ids.js";
import type { BranchRow } from "../../store/port/index.js";

/** Where a new branch starts: after `entryId` (null at the start) at `position` of `parentId`'s lineage. */
export interface ForkPoint {
  parentId: string;
  position: number;
  entryId: string | null;
  /** The checkpoint forked at (a rollback's); null for a fork at no checkpoint. */
  checkpointId?: string | null;
}

/**
 * A fork at a checkpoint is a rollback's branch; one at no checkpoint (an edit, or a pop that removes instead of
 * replacing) is an edit's: exports and imports tell a rollback's branch by the checkpoint it forks at.
 */
export function forkedBranch(sessionId: string, fork: ForkPoint): BranchRow {
  const checkpointId = fork.checkpointId ?? null;
  return {
    id: newId("br"),
    sessionId,
    parentId: fork.parentId,
    forkCheckpointId: checkpointId,
    forkPosition: fork.position,
    forkEntryId: fork.entryId,
    name: null,
    reason: checkpointId === null ? "edit" : "rollback",
    createdAt: 0,
  };
}
