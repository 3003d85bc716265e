// Forced workspace moves (`force: true`): files changed outside forkpoint (drift) are saved in a checkpoint of their
// own on the current branch, then the move overwrites them, as `git checkout --force` does but with nothing lost.
import { shownNames } from "../../models/unsafe-text.js";
import { ConflictError } from "../../models/errors.js";
import type { SavedDrift } from "../../models/types.js";
import type { WorkspaceRow } from "../../store/port/index.js";
import type { EngineContext, SessionRef } from "../core/context.js";
import { reaches } from "../workspace/named-paths.js";
import { prepareRestore, type PreparedRestore } from "../workspace/prepare-restore.js";
import { workspaceOf } from "../workspace/snapshots.js";
import { checkpointAfter } from "../writes/checkpoint-after.js";

/** The name of the checkpoint a forced move saves drift in: `forced: drift before rollback` (or switch, edit). */
export const savedDriftName = (move: string): string => `forced: drift before ${move}`;

/**
 * The restore of a move, checked (see `prepareRestore`). Without `force`, drift is refused (`WORKSPACE_DRIFT`). With
 * it, the directory as it is now is first saved in a checkpoint (not automatic) named `savedDriftName(move)` with
 * metadata `{ forkpoint: "saved-drift", move, drifted: [paths] }`, which also makes it what forkpoint last saw; the
 * restore is then checked again against that. Everything else that would refuse the move (a damaged content, a link
 * or file in the way) is checked before anything is saved.
 * Crash safety: the checkpoint commits in one transaction before the restore journal is written, so a crash in
 * between leaves the directory as it was and saved; one after it is a journaled restore like any other, whose
 * "before" is the saved drift. `hold`: paths left as they are, not drift to refuse or save (see `prepareRestore`).
 */
export async function prepareMoveRestore(
  ctx: EngineContext,
  ref: SessionRef,
  ws: WorkspaceRow,
  manifestId: number,
  force: { move: string } | null,
  hold: readonly string[] = [],
): Promise<{ prepared: PreparedRestore; savedDrift: SavedDrift | null }> {
  const first = await prepareRestore(ctx, ws, manifestId, force !== null, undefined, [], hold);
  if (!force || first.drifted.length === 0) return { prepared: first, savedDrift: null };
  const savedDrift = await saveDrift(ctx, ref, force.move, first.drifted);
  // A change made after the checkpoint read the directory is drift again: refused, so it is not lost either.
  const saved = await reportSavedDrift(
    savedDrift,
    ctx.store.read((tx) => workspaceOf(tx, ref.id, "scope")),
  );
  // The saved checkpoint holds the new files the target ignores too; the restore leaves them as the first look did.
  const prepared = prepareRestore(ctx, saved, manifestId, false, undefined, first.leftAlone, hold);
  return { prepared: await reportSavedDrift(savedDrift, prepared), savedDrift };
}

/**
 * The drift check of a move that restores no files yet runs tools on the workspace (a "both" switch to the current
 * branch with calls to undo or replay): drift in the paths `reach` those calls' runs changed ("all": one has no record;
 * a folder there reaches what is under it) would be written over unsaved. Refused (`WORKSPACE_DRIFT`), or with `force` saved first, as `prepareMoveRestore`
 * does; null when there is none. Drift elsewhere, and in `keep` (hand edits the move's undos put back and keep), is
 * left as it is: nothing writes over it. `changed`: paths of `reach` known to hold a save though forkpoint's last look
 * says otherwise (a hand edit is never made known, so a save back to what it last saw there looks like none).
 */
export async function saveDriftBeforeTools(
  ctx: EngineContext,
  ref: SessionRef,
  ws: WorkspaceRow,
  reach: ReadonlySet<string> | "all",
  force: { move: string } | null,
  keep: ReadonlySet<string> = new Set(),
  changed: readonly string[] = [],
): Promise<SavedDrift | null> {
  // The files as forkpoint last saw them, "restored": no change, only the checks (drift, calls under way). Drift is
  // left as it is ("leave"): a link or folder in its way blocks no write here, the calls' own paths are checked for
  // links and what forkpoint does not capture (see writes-in-the-way.ts).
  const found = (await prepareRestore(ctx, ws, ws.manifestId, "leave")).drifted;
  const drifted = [...found, ...changed.filter((p) => !found.includes(p))];
  const over = drifted.filter((p) => !keep.has(p) && (reach === "all" || reaches(reach, p)));
  if (over.length === 0) return null;
  // The checkpoint holds every file as it is; it names those the calls write over, as `plan().drift` does.
  if (force) return saveDrift(ctx, ref, force.move, over);
  const shown = shownNames(over);
  throw new ConflictError(
    `the workspace ${ws.dir} changed outside forkpoint since it last saw it (${shown}), and ` +
      `${reach === "all" ? "a call this move undoes or replays may write" : "the calls this move undoes or replays write"} ` +
      `${over.length === 1 ? "it" : "them"}; take a checkpoint to keep those changes (or move with force: true), then move`,
    "WORKSPACE_DRIFT",
  );
}

/** Saves the directory as it is now in a checkpoint of its own (see `prepareMoveRestore`). */
async function saveDrift(ctx: EngineContext, ref: SessionRef, move: string, drifted: string[]): Promise<SavedDrift> {
  const { checkpoint } = await checkpointAfter(
    ctx,
    ref,
    [],
    { name: savedDriftName(move), metadata: { forkpoint: "saved-drift", move, drifted } },
    { ordered: false },
  );
  return { checkpointId: checkpoint.id, files: drifted };
}

/**
 * `work`, a step of a forced move after its drift was saved: when it fails, its error carries `savedDrift`, so the
 * caller learns where the files it had changed are kept (the move stops; its checkpoint stays).
 */
export async function reportSavedDrift<T>(savedDrift: SavedDrift | null, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (savedDrift && error instanceof Error) Object.assign(error, { savedDrift });
    throw error;
  }
}
