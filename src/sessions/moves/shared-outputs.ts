// What the calls a "both" move's two sides share left in their files: the content the target's lineage has there.
import type { Step, Tx } from "../../store/port/index.js";
import { contentOf } from "../workspace/file-id.js";

/**
 * For the paths calls `shared` changed (applied on both sides of a move, made before the point they part: see
 * `sharedAfter`), the file id the newest of them left there as its run recorded it (null: deleted). That is the
 * content as of that point, not what one side changed since (a hand edit saved on a branch the target never saw). A
 * path is left out where that is not known: no outputs recorded (an older database's call), drift left there by the
 * run, a call applied now by a replay (its files may differ from the run's), or a content no longer stored.
 */
export function* sharedOutputs(tx: Tx, sessionId: string, shared: readonly string[]): Step<Map<string, string | null>> {
  const out = new Map<string, string | null>();
  if (shared.length === 0) return out;
  const replayed = new Set((yield* tx.replayedApplications(sessionId)).map((r) => r.entryId));
  const rows = [];
  for (const id of shared) {
    const row = yield* tx.getTool(id);
    if (row && row.appliedSeq !== null) rows.push(row);
  }
  // Oldest application first: a later call's output on the same path is what the files held at the point.
  rows.sort((a, b) => a.appliedSeq! - b.appliedSeq!);
  for (const row of rows) {
    const outputs = replayed.has(row.id) ? undefined : yield* tx.callOutputs(row.id);
    const paths = (yield* tx.callPaths(row.id)) ?? [];
    for (const path of paths) {
      const id = outputs?.get(path);
      // Not known for the newest: an older call's output is not what the point held either.
      if (id === undefined) out.delete(path);
      else out.set(path, id);
    }
  }
  const wanted = [...new Set([...out.values()].flatMap((id) => (id === null ? [] : [contentOf(id)])))];
  const present = new Set(yield* tx.presentBlobs(wanted));
  for (const [path, id] of out) if (id !== null && !present.has(contentOf(id))) out.delete(path);
  return out;
}
