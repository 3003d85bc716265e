// Reading a branch's lineage: its head, the entry at a position, and its entries (one walk over the ancestry).
import { NotFoundError } from "../../models/errors.js";
import type { BranchRow, EntryRow, HeadRow, LineageSegment, MessageRow, SessionRow, Step, ToolRow, Tx } from "../../store/port/index.js";
import { GENESIS_HASH } from "../integrity/hashes.js";

/** The entry at `position` in `branch`'s lineage (undefined at position 0). */
export function* entryAt(tx: Tx, branch: BranchRow, position: number): Step<EntryRow | undefined> {
  if (position <= 0) return undefined;
  if (position > branch.forkPosition) return yield* tx.ownEntryAt(branch.id, position);
  if (position === branch.forkPosition && branch.forkEntryId) return yield* tx.getEntry(branch.forkEntryId);
  const segment = (yield* tx.lineage(branch.id, position)).find((s) => s.after < position && position <= s.upTo);
  return segment ? yield* tx.ownEntryAt(segment.branchId, position) : undefined;
}

/** Entries of a lineage in position order, up to `upTo` (the head when undefined). */
export function* lineageEntries(tx: Tx, branchId: string, upTo?: number): Step<EntryRow[]> {
  const out: EntryRow[] = [];
  for (const segment of yield* tx.lineage(branchId, upTo)) {
    for (const row of yield* tx.segmentEntries(segment)) out.push(row);
  }
  return out;
}

/** Messages of a lineage in position order, each built by `map`. */
export function* lineageMessages<T>(tx: Tx, branchId: string, map: (row: MessageRow) => T, upTo?: number): Step<T[]> {
  const out: T[] = [];
  for (const segment of yield* tx.lineage(branchId, upTo)) yield* tx.segmentMessages(segment, map, out);
  return out;
}

/** The last message of a branch's lineage (its own segment first, then its ancestors'), if it has one. */
export function* lastLineageMessage(tx: Tx, branchId: string): Step<MessageRow | undefined> {
  const segments = yield* tx.lineage(branchId);
  let last: MessageRow | undefined;
  for (let i = segments.length - 1; i >= 0 && !last; i--) last = yield* tx.lastSegmentMessage(segments[i]!);
  return last;
}

/** Tool invocations of a lineage with their completion and applied status, in position order. */
export function* lineageTools(tx: Tx, branchId: string, upTo?: number): Step<ToolRow[]> {
  const out: ToolRow[] = [];
  for (const segment of yield* tx.lineage(branchId, upTo)) {
    for (const row of yield* tx.segmentTools(segment)) out.push(row);
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
export function* branchOf(tx: Tx, session: SessionRow, branchId: string): Step<BranchRow> {
  const branch = yield* tx.getBranch(branchId);
  if (!branch || branch.sessionId !== session.id) throw new NotFoundError("branch", branchId);
  return branch;
}
