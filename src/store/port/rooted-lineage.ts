// A lineage walk must end at a root: one that does not (a cycle in damaged branch rows) is an integrity error.
import { IntegrityError } from "../../models/errors.js";
import type { LineageSegment } from "./entries.js";

/** A lineage row as the walk reads it: the segment and its branch's parent. */
export interface WalkedSegment extends LineageSegment {
  parentId: string | null;
}

/** The walk's segments (root first), or `IntegrityError` when its top is not a root: the ancestry loops. */
export function rootedLineage(branchId: string, rows: WalkedSegment[]): LineageSegment[] {
  const top = rows[0];
  if (top && top.parentId !== null) throw new IntegrityError(`branch ${branchId}'s ancestry is a cycle (through ${top.branchId})`);
  return rows.map((r) => ({ branchId: r.branchId, after: r.after, upTo: r.upTo }));
}
