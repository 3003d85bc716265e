// After a recorded call's undo: a hand edit it wrote over, that an earlier undo of the move put back, is kept or the undo fails.
import { ConflictError } from "../../models/errors.js";
import type { MoveStepRow } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import type { MoveSpec } from "./move-spec.js";
import type { OwnChanges } from "./own-changes.js";
import { keptInNone, unsavedIn } from "./recorded-over.js";

/**
 * After the undo of a recorded call (`step`), which puts back what its result says: where it wrote over a hand edit an
 * earlier undo of the move put back, made after that call (or a save made during the move), that one is written back
 * and the undo's write there taken back (see `PutBack.keepSaved`). What the undo wrote may be a hand edit made before
 * its call: content no checkpoint keeps is lost then. The undo fails instead (the later edit is written back, the call
 * stays applied, its result still holding what it wrote): no save is lost, and the move stops there as at any failed
 * undo.
 */
export async function refuseTakenBack(ctx: EngineContext, spec: MoveSpec, step: MoveStepRow, own: OwnChanges | undefined): Promise<void> {
  const over = own?.overPutBack() ?? new Map<string, string | null>();
  if (over.size === 0) return;
  const unsaved = await unsavedIn(ctx, spec, [...over.keys()]);
  if (unsaved.length === 0) return;
  // A hand edit put back that a checkpoint keeps (taken since a stop here, say) loses nothing written over: the undo's
  // write stays, drift as any recorded call's undo leaves (see `OwnChanges.leaveDrift`).
  const files = new Map(unsaved.flatMap((path) => (typeof over.get(path) === "string" ? [[path, over.get(path)!] as const] : [])));
  const inNone = new Set(await keptInNone(ctx, spec, files));
  const held = unsaved.filter((path) => files.has(path) && !inNone.has(path));
  own!.keepWritten(held);
  const lost = unsaved.filter((path) => !held.includes(path));
  if (lost.length === 0) return;
  const ws = await ctx.store.read((tx) => tx.getWorkspace(spec.sessionId));
  throw new ConflictError(
    `the undo of recorded call ${step.entryId} put back in ${lost.join(", ")} in the workspace ${ws?.dir ?? ""} ` +
      "content no checkpoint keeps (a hand edit made before that call, maybe) over a hand edit this move's undo of a " +
      "later call put back: one of the two would be lost, so the later one is written back and this undo fails, the " +
      "call left applied; take a checkpoint to keep the hand edit on disk, then move again",
    "WORKSPACE_DRIFT",
  );
}
