// A files-only move (scope "files") keeps the tool track in step with the files it restores: which calls to mark.
import type { SessionRow, Step, Tx } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import type { TrackPlan } from "../workspace/track-plan.js";
import type { MoveTarget } from "./move-plan.js";
import { snapshotPosition } from "./move-files.js";
import { fileCalls, outsideCalls } from "../workspace/call-reach.js";
import { markedInOrder, snapshotHolds } from "../workspace/unapplied.js";

/**
 * The calls a files-only move to `target` marks applied or unapplied with the snapshot it restores (the one
 * `targetFiles` finds): a call whose run changed workspace files (its recorded paths) has its effect in those files,
 * so it is applied exactly when the snapshot holds it (its lineage's calls up to it less those it records as not
 * held, and the calls off it it records as held). Calls that changed no file (effects outside the workspace), calls
 * without recorded paths (an older database's, or run elsewhere), irreversible ones (they stay applied), imported ones
 * and those of unknown outcome are left as they are. Undefined when nothing changes.
 */
export function* filesTrackPlan(
  ctx: EngineContext,
  tx: Tx,
  session: SessionRow,
  target: MoveTarget,
  checkpointId: string | null,
): Step<TrackPlan | undefined> {
  if (!session.hasTools) return undefined;
  const candidates = yield* fileCalls(tx, session.id);
  if (candidates.length === 0) return undefined;
  const at = yield* snapshotPosition(tx, session.id, target, checkpointId);
  if (!at) return undefined;
  const segments = yield* tx.lineage(target.branchId, at.position);
  const appliedRows = yield* tx.appliedCalls(session.id);
  const applied = new Set(appliedRows.map((c) => c.id));
  const replayed = new Map((yield* tx.replayedApplications(session.id)).map((r) => [r.entryId, r.appliedSeq]));
  // Where each call sits says whether the snapshot holds it; only those that change are read (a session's calls can be
  // many, their results large). A call applied by another application than the one the snapshot holds is marked again.
  const held = new Set<string>();
  const changing = candidates.filter((c) => {
    if (snapshotHolds(segments, at, c)) held.add(c.id);
    if (held.has(c.id) !== applied.has(c.id)) return true;
    return held.has(c.id) && replayed.get(c.id) !== at.replays[c.id];
  });
  if (changing.length === 0) return undefined;
  const uncertain = new Set(yield* tx.uncertainInvocations(session.id));
  const imported = yield* tx.importedCalls(session.id);
  const mark: string[] = [];
  const unmark: string[] = [];
  for (const { id } of changing) {
    const row = yield* tx.getTool(id);
    if (!row || row.status !== "succeeded" || uncertain.has(id) || imported.has(id)) continue;
    if (row.reversible === false || (row.reversible === null && !ctx.tools.isReversible(row.tool ?? ""))) continue;
    (held.has(id) ? mark : unmark).push(id);
  }
  if (mark.length + unmark.length === 0) return undefined;
  // Marked as they were applied when the snapshot was taken, as a move marks the calls its snapshot holds, with the
  // held calls that stay applied but were applied after one of them there: undo then takes them back last first. A
  // call without recorded paths (`recordToolCall`'s) the snapshot holds stays applied and is among them too, as in a
  // move's restore (see `inHeldOrder`): left before a call marked again, a later undo would take that call back first,
  // its undo running over what the recorded call wrote after it.
  const marking = new Set(mark);
  const outside = yield* outsideCalls(tx, session.id, ctx.tools);
  const unrecorded = appliedRows.filter((c) => !held.has(c.id) && !outside.has(c.id) && snapshotHolds(segments, at, c));
  for (const c of unrecorded) held.add(c.id);
  const staying = [...candidates, ...unrecorded].filter(
    (c) =>
      !marking.has(c.id) && held.has(c.id) && applied.has(c.id) && !unmark.includes(c.id) && !uncertain.has(c.id) && !imported.has(c.id),
  );
  mark.splice(0, mark.length, ...markedInOrder([...mark, ...staying.map((c) => c.id)], marking, at.order ?? []));
  const replays = Object.fromEntries(mark.filter((id) => at.replays[id] !== undefined).map((id) => [id, at.replays[id]!]));
  return { mark, unmark, ...(Object.keys(replays).length === 0 ? {} : { replays }) };
}
