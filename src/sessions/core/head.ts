// A lineage's head: its last entry (or what a branch with no entries starts from), read in O(1) index lookups.
import type { BranchRow, HeadRow, Step, Tx } from "../../store/port/index.js";
import { GENESIS_HASH } from "../integrity/hashes.js";

/** The last entry of a lineage, or what a branch with no entries starts from. */
export interface Head {
  entryId: string | null;
  position: number;
  hash: string;
  stateId: number | null;
  msgCount: number;
  /** The head entry's time: the next entry's is never before it (the timeline walks a branch by position). */
  createdAt: number;
}

const GENESIS: Head = { entryId: null, position: 0, hash: GENESIS_HASH, stateId: null, msgCount: 0, createdAt: 0 };

export function headOfEntry(entry: HeadRow | undefined): Head {
  if (!entry) return GENESIS;
  return {
    entryId: entry.id,
    position: entry.position,
    hash: entry.hash,
    stateId: entry.stateId,
    msgCount: entry.msgCount,
    createdAt: entry.createdAt,
  };
}

/** The head of a branch: its last own entry, or its fork entry when it has none yet. O(1) index lookups. */
export function* headOf(tx: Tx, branch: BranchRow): Step<Head> {
  return yield* headAfter(tx, branch, yield* tx.lastOwnEntry(branch.id));
}

/** The head of `branch` given its last own entry (read already, e.g. by `store.currentOf`). */
export function* headAfter(tx: Tx, branch: BranchRow, last: HeadRow | undefined): Step<Head> {
  if (last) return headOfEntry(last);
  return headOfEntry(branch.forkEntryId ? yield* tx.getEntry(branch.forkEntryId) : undefined);
}
