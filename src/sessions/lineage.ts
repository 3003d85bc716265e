// Reading a branch's lineage: its head, the entry at a position, and its entries (one walk over the ancestry).
import { NotFoundError } from "../models/errors.js";
import type { BranchRow, EntryRow, HeadRow, LineageSegment, MessageRow, SessionRow, Store, ToolRow } from "../store/store.js";
import { GENESIS_HASH } from "./integrity.js";

/** The last entry of a lineage, or what a branch with no entries starts from. */
export interface Head {
  entryId: string | null;
  position: number;
  hash: string;
  stateId: number | null;
  msgCount: number;
}

const GENESIS: Head = { entryId: null, position: 0, hash: GENESIS_HASH, stateId: null, msgCount: 0 };

export function headOfEntry(entry: HeadRow | undefined): Head {
  if (!entry) return GENESIS;
  return { entryId: entry.id, position: entry.position, hash: entry.hash, stateId: entry.stateId, msgCount: entry.msgCount };
}

/** The head of a branch: its last own entry, or its fork entry when it has none yet. O(1) index lookups. */
export function headOf(store: Store, branch: BranchRow): Head {
  return headAfter(store, branch, store.lastOwnEntry(branch.id));
}

/** The head of `branch` given its last own entry (read already, e.g. by `store.currentOf`). */
export function headAfter(store: Store, branch: BranchRow, last: HeadRow | undefined): Head {
  if (last) return headOfEntry(last);
  return headOfEntry(branch.forkEntryId ? store.getEntry(branch.forkEntryId) : undefined);
}

/** The entry at `position` in `branch`'s lineage (undefined at position 0). */
export function entryAt(store: Store, branch: BranchRow, position: number): EntryRow | undefined {
  if (position <= 0) return undefined;
  if (position > branch.forkPosition) return store.ownEntryAt(branch.id, position);
  if (position === branch.forkPosition && branch.forkEntryId) return store.getEntry(branch.forkEntryId);
  const segment = store.lineage(branch.id, position).find((s) => s.after < position && position <= s.upTo);
  return segment ? store.ownEntryAt(segment.branchId, position) : undefined;
}

/** Entries of a lineage in position order, up to `upTo` (the head when undefined). */
export function lineageEntries(store: Store, branchId: string, upTo?: number): EntryRow[] {
  const out: EntryRow[] = [];
  for (const segment of store.lineage(branchId, upTo)) {
    for (const row of store.segmentEntries(segment)) out.push(row);
  }
  return out;
}

/** Messages of a lineage in position order, each built by `map`. */
export function lineageMessages<T>(store: Store, branchId: string, map: (row: MessageRow) => T, upTo?: number): T[] {
  const out: T[] = [];
  for (const segment of store.lineage(branchId, upTo)) store.segmentMessages(segment, map, out);
  return out;
}

/** Tool invocations of a lineage with their completion and applied status, in position order. */
export function lineageTools(store: Store, branchId: string, upTo?: number): ToolRow[] {
  const out: ToolRow[] = [];
  for (const segment of store.lineage(branchId, upTo)) {
    for (const row of store.segmentTools(segment)) out.push(row);
  }
  return out;
}

/** Length of the prefix two lineages share (positions 1..n are the same entries in both). */
export function commonPrefix(a: LineageSegment[], b: LineageSegment[], headA: number, headB: number): number {
  let common = 0;
  for (let i = 0; i < a.length && i < b.length; i++) {
    const sa = a[i]!;
    const sb = b[i]!;
    if (sa.branchId !== sb.branchId) break;
    const endA = Math.min(sa.upTo, headA);
    const endB = Math.min(sb.upTo, headB);
    common = Math.min(endA, endB);
    if (endA !== endB) break;
  }
  return common;
}

/** The branch, which must belong to the session; another session's or unknown id is `NotFoundError`. */
export function branchOf(store: Store, session: SessionRow, branchId: string): BranchRow {
  const branch = store.getBranch(branchId);
  if (!branch || branch.sessionId !== session.id) throw new NotFoundError("branch", branchId);
  return branch;
}
