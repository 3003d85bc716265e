// Whether a document's times never go back along the streams the timeline walks (a branch's entries, checkpoints, events).
import type { SessionExport } from "../../models/session-export.js";

/**
 * True when each branch's entries (by position), the checkpoints and the events (in document order, which is the
 * order they are inserted in) have times that never decrease. A session written here always has; a document from
 * elsewhere may not, and its timeline then sorts by time instead of walking the indexes.
 */
export function timesOrdered(doc: SessionExport): boolean {
  const rising = (times: number[]) => times.every((t, i) => i === 0 || t >= times[i - 1]!);
  const byBranch = new Map<string, { position: number; at: number }[]>();
  for (const e of doc.entries) {
    let list = byBranch.get(e.branchId);
    if (!list) byBranch.set(e.branchId, (list = []));
    list.push({ position: e.position, at: e.createdAt });
  }
  for (const list of byBranch.values()) if (!rising(list.sort((a, b) => a.position - b.position).map((e) => e.at))) return false;
  return rising(doc.checkpoints.map((c) => c.createdAt)) && rising(doc.events.map((e) => e.createdAt));
}
