// What a planned move with files would do to them: the restore's own checks, run without writing (see `plan`).
import type { MovePlan } from "../../models/types.js";
import type { WorkspaceRow } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { restoreCheck } from "../workspace/prepare-restore.js";

/**
 * The snapshot a move with files restores, or `self`: a switch to the current branch, which moves no file (with
 * `reach`, a "both" one whose undos and replays write those paths, "all" when any: see `saveDriftBeforeTools`).
 */
export type RestoreTarget =
  | { ws: WorkspaceRow; manifestId: number; keep: readonly string[] }
  | { self: true; ws?: WorkspaceRow; reach?: ReadonlySet<string> | "all" };

/**
 * `planned` with what its restore would do (null: a "conversation" move, which restores none): the files written and
 * deleted, and the drift that refuses the move unless it is forced (then saved first), or what refuses it even then.
 */
export async function plannedRestore(ctx: EngineContext, planned: MovePlan, restore: RestoreTarget | null): Promise<MovePlan> {
  if (restore === null) return planned;
  if ("self" in restore) {
    const { ws, reach } = restore;
    // Drift its calls' undos and replays would write over refuses it; drift elsewhere is left as it is.
    const drifted = ws && reach ? (await restoreCheck(ctx, ws, ws.manifestId)).drifted : [];
    const drift = drifted.filter((p) => reach === "all" || reach?.has(p));
    return { ...planned, files: { written: [], deleted: [] }, drift };
  }
  const check = await restoreCheck(ctx, restore.ws, restore.manifestId);
  // The paths the move keeps as they are (an irreversible call's effect, see `irreversibleOutside`) do not move.
  const keep = new Set(restore.keep);
  const moves = (p: string) => !keep.has(p);
  const kept = [...check.written, ...check.deleted].filter((p) => !moves(p)).sort();
  const files = { written: check.written.filter(moves), deleted: check.deleted.filter(moves), ...(kept.length > 0 ? { kept } : {}) };
  return { ...planned, files, drift: check.drifted, ...(check.blocked ? { blocked: check.blocked } : {}) };
}
