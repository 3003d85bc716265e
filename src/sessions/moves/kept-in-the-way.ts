// A hand edit a "both" move's undo puts back and its files step keeps, where the restore writes a file over its folder
// (or under it, as a file): the restore's own check refuses that once the undo ran, forced or not (see `assertRestorable`).
import { ConflictError } from "../../models/errors.js";
import type { ToolInvocation } from "../../models/types.js";
import type { WorkspaceRow } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { restoreCheck } from "../workspace/prepare-restore.js";
import { plannedPutBacks, putBackFiles } from "./planned-drift.js";

/**
 * Why the restore refuses, forced or not, once the undos put back the hand edits `kept` (files, as `assertRestorable`
 * says it): one kept under a path it writes as a file, or one kept where a file it writes needs a directory; or undefined.
 */
export function keptInTheWay(kept: readonly string[], written: readonly string[]): string | undefined {
  const writes = new Set(written);
  for (const k of kept) {
    const parts = k.split("/");
    for (let i = 1; i < parts.length; i++) {
      const folder = parts.slice(0, i).join("/");
      if (writes.has(folder)) return `${folder} is a directory holding ${k}, which the restore does not delete`;
    }
    const under = written.find((w) => w.startsWith(`${k}/`));
    if (under !== undefined) return `${k} is a file where ${under} needs a directory`;
  }
  return undefined;
}

/**
 * Refuses a "both" move (WORKSPACE_DRIFT, forced or not) before any undo runs or drift is saved, where the hand edits
 * its undos put back, kept by its files step, are in the way of the restore of `manifestId` (see `keptInTheWay`), as
 * its plan says in `blocked`. `hold`: a stopped move's put-backs, on disk already (the restore's own check sees them).
 */
export async function refuseKeptInTheWay(
  ctx: EngineContext,
  ws: WorkspaceRow,
  manifestId: number,
  steps: { undo: readonly ToolInvocation[]; replay: readonly ToolInvocation[] },
  hold: readonly string[],
): Promise<void> {
  if (steps.undo.length === 0) return;
  const putBacks = await ctx.store.read((tx) => plannedPutBacks(tx, ws.sessionId, steps.undo, steps.replay, manifestId));
  if (putBacks.paths.size === 0) return;
  const back = await putBackFiles(ctx, ws, putBacks.paths);
  const kept = back.kept.filter((p) => putBacks.paths.get(p)?.found !== null && !hold.includes(p));
  if (kept.length === 0) return;
  const check = await restoreCheck(ctx, ws, manifestId);
  if (check.blocked) return; // the restore's own check refuses it first, as it always did
  const written = [...check.written.filter((p) => !putBacks.paths.has(p)), ...back.written];
  const why = keptInTheWay(kept, written);
  if (why) throw new ConflictError(`cannot restore the workspace ${ws.dir}: ${why}`, "WORKSPACE_DRIFT");
}
