// Restoring a prepared snapshot: journaled before any file moves (so that a crash is finished by recovery), written
// file by file, then recorded as what forkpoint last saw.
import { ConflictError, ForkpointError, errorText } from "../../models/errors.js";
import type { Step, Tx } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { SELF_START } from "../core/process-identity.js";
import { contentOf } from "./file-id.js";
import { restoreChanges, type Moved, type RestoreChange, type Restored } from "./files.js";
import { TreeReader, applyChanges, type FileChange } from "./trees.js";
import { PackWriter } from "./packs.js";
import { contentsFor, type PreparedRestore } from "./prepare-restore.js";
import { movedMeanwhile } from "../moves/files-planned.js";
import { refuseLiveCalls } from "../moves/refusals.js";
import { assertNoMoveRunning, endRestore, inflightRestores, type RestoreJournal } from "./restore-guards.js";
import { sameFilesConfig } from "./snapshots.js";
import type { StatRows } from "./stat-cache.js";
import { scanContext, stateOf, type WorkspaceState } from "./state.js";
import { deletedFile, stillIs, wroteFile } from "./cache-writes.js";
import { applyTrackPlan } from "./track-plan.js";
import type { ScanContext } from "./walk.js";

/**
 * Makes the workspace hold the prepared target's files and records it as what forkpoint last wrote. The restore is
 * journaled first: a crash halfway leaves each file at its old or its new version, and recovery finishes it (or,
 * for scope "both" when the conversation never moved, puts the old version back). A "files" restore clears the
 * journal here; a "both" move clears it with `endRestore` once the conversation has moved.
 */
export async function restoreFiles(
  ctx: EngineContext,
  sessionId: string,
  p: PreparedRestore,
  move: Pick<RestoreJournal, "scope" | "fromBranchId" | "fromHead" | "track" | "leave">,
): Promise<RestoredFiles> {
  const journal: RestoreJournal = {
    ...move,
    manifestId: p.manifestId,
    fromManifestId: p.ws.manifestId,
    pid: process.pid,
    pidStart: SELF_START,
    pids: [process.pid],
    move: p.ownMove ?? null,
  };
  const state = await stateOf(ctx, p.ws);
  await ctx.store.write({ sessionId }, (tx) => startFilesRestoreUnit(ctx, tx, sessionId, p, journal));
  inflightRestores.add(sessionId);
  try {
    const moved: Moved = { any: false, applied: [] };
    let changed: Restored;
    try {
      changed = await state.exclusive(async () => {
        const still = (path: string, from: string | null) => stillIs(state.cache, p.ws.dir, path, from);
        const done = await restoreChanges(p.ws.dir, p.changes, contentsFor(ctx, p.contents), moved, still);
        recordRestored(state, scanContext(ctx, state, null), p.changes, done);
        return done;
      });
    } catch (error) {
      // Failed before any file moved (staging): nothing to finish, so no journal. Failed midway (a file that cannot
      // be deleted or replaced): what moved is put back, so that the session goes on as before the move. When even
      // that fails, the journal stays: recovery finishes it (this thread's next call of the session does too).
      if (moved.any && !(await tookBack(ctx, state, p, moved.applied!))) throw error;
      await endRestore(ctx, sessionId);
      // A file that could not be staged (its folder's permissions, a full disk) is a write that failed, not a bug.
      if (!moved.any && (error instanceof ForkpointError || !isSystemError(error))) throw error;
      if (!moved.any)
        throw new ForkpointError(
          "WORKSPACE_WRITE_FAILED",
          `restoring the workspace ${p.ws.dir} failed (${errorText(error)}); nothing was changed`,
          { cause: error },
        );
      throw new ForkpointError(
        "WORKSPACE_WRITE_FAILED",
        `restoring the workspace ${p.ws.dir} failed (${errorText(error)}); the files it had changed were put back as they were`,
        { cause: error },
      );
    }
    const stats = state.cache.toRows();
    await ctx.store.write({ sessionId }, (tx) => endFilesRestoreUnit(tx, sessionId, journal, ctx, move, stats));
    state.cache.markStored(stats);
    return restoredFiles(changed);
  } finally {
    inflightRestores.delete(sessionId);
  }
}

/** Whether `error` is the file system's (an errno code: EACCES, EPERM, ENOSPC, EROFS, ...). */
const isSystemError = (error: unknown): boolean =>
  error instanceof Error &&
  typeof (error as NodeJS.ErrnoException).code === "string" &&
  typeof (error as NodeJS.ErrnoException).errno === "number";

/**
 * Takes back the changes a failed restore applied (each file back to its version before, unless someone changed it
 * since): whether the directory is as it was.
 */
async function tookBack(
  ctx: EngineContext,
  state: WorkspaceState,
  p: PreparedRestore,
  applied: readonly RestoreChange[],
): Promise<boolean> {
  const back = applied.map((c) => ({ path: c.path, from: c.to, to: c.from }));
  try {
    return await state.exclusive(async () => {
      const still = (path: string, from: string | null) => stillIs(state.cache, p.ws.dir, path, from);
      const done = await restoreChanges(p.ws.dir, back, contentsFor(ctx, new Map()), { any: false }, still);
      recordRestored(state, scanContext(ctx, state, null), back, done);
      return done.kept.length === 0;
    });
  } catch (error) {
    ctx.logger.warn(`forkpoint: putting back the files of a failed restore of ${p.ws.dir} failed; recovery finishes it`, error);
    return false;
  }
}

/** What a restore returns: the files written and deleted, and those kept as someone changed them (when any). */
export type RestoredFiles = { written: string[]; deleted: string[]; kept?: string[] };

export const restoredFiles = (r: Restored): RestoredFiles => (r.kept.length > 0 ? r : { written: r.written, deleted: r.deleted });

/**
 * Records in the stat cache what a restore wrote and deleted (its stat data, no read). A file it kept is looked at
 * again by the next scan: someone changed it.
 */
export function recordRestored(state: WorkspaceState, sc: ScanContext, changes: readonly FileChange[], done: Restored): void {
  const written = new Set(done.written);
  const deleted = new Set(done.deleted);
  for (const c of changes) {
    if (deleted.has(c.path)) deletedFile(state.cache, c.path);
    else if (written.has(c.path)) wroteFile(state.cache, sc, c.path, c.to!);
  }
  for (const path of done.kept) state.pending.dirty.add(path);
}

function* endFilesRestoreUnit(
  tx: Tx,
  sessionId: string,
  journal: RestoreJournal,
  ctx: EngineContext,
  move: Pick<RestoreJournal, "scope" | "fromBranchId" | "fromHead">,
  stats: StatRows,
) {
  yield* tx.setWorkspaceManifest(sessionId, journal.manifestId, ctx.now());
  yield* tx.putWorkspaceStats(sessionId, stats.rows, stats.deleted);
  if (move.scope !== "files") return;
  // The tool track follows the files, in the transaction that ends the restore (recovery does the same).
  if (journal.track) yield* applyTrackPlan(tx, sessionId, journal.track, ctx.now());
  yield* tx.setWorkspaceRestoring(sessionId, null);
}

function* startFilesRestoreUnit(ctx: EngineContext, tx: Tx, sessionId: string, p: PreparedRestore, journal: RestoreJournal) {
  // Another process (or handle) may have restored, re-attached or pruned since `prepareRestore` checked: the
  // journal is written only onto the workspace that was checked, and no other restore can start once it is.
  const now = yield* tx.getWorkspace(sessionId);
  if (now?.restoring) {
    throw new ConflictError(`the workspace ${p.ws.dir} is being restored by another move; try again when it ends`, "MOVE_IN_PROGRESS");
  }
  yield* assertNoMoveRunning(tx, p.ws, p.ownMove);
  // A call another process or server started since the move was planned: the track plan does not hold it (a journaled
  // move refuses calls itself while it runs). Calls refuse to start once the journal is written (see journalCall).
  if (p.ownMove === undefined) yield* refuseLiveCalls(ctx, tx, sessionId);
  if (!now || !sameFilesConfig(now, p.ws)) {
    throw new ConflictError(
      `the workspace ${p.ws.dir} changed (another process moved or re-attached it) since this move checked it; move again`,
      "WORKSPACE_DRIFT",
    );
  }
  // Another handle's, process's or server's call or move made its changes known since: forkpoint's own doing, the move
  // is planned again on it (not drift).
  if (now.manifestId !== p.ws.manifestId)
    throw movedMeanwhile(sessionId, `forkpoint changed the files of its workspace ${p.ws.dir} since`, p.ownMove === undefined);
  // The target's snapshot, stored again if a prune took it since it was read (otherwise its id, unchanged).
  if ((yield* tx.getManifest(p.manifestId)) === undefined) journal.manifestId = yield* storeTarget(tx, p);
  yield* tx.setWorkspaceRestoring(sessionId, JSON.stringify(journal));
}

/** Stores the target again from what forkpoint last saw and the changes (a prune took it after it was prepared). */
function* storeTarget(tx: Tx, p: PreparedRestore): Step<number> {
  const reader = new TreeReader();
  const known = yield* reader.rootOf(tx, p.ws.manifestId);
  const applied = yield* applyChanges(tx, reader, known, new Map(p.changes.map((c) => [c.path, c.to])));
  const needed = [...new Set(p.changes.flatMap((c) => (c.to === null ? [] : [contentOf(c.to)])))];
  const present = new Set(yield* tx.presentBlobs(needed));
  const writer = new PackWriter();
  for (const h of needed) {
    if (present.has(h)) continue;
    const content = p.contents.get(h);
    if (!content) throw new ConflictError("the move's target was deleted and pruned while it was prepared; move again", "WORKSPACE_DRIFT");
    writer.add(h, content);
  }
  yield* writer.flush(tx);
  yield* tx.insertTrees([...[...reader.ephemeralBodies].map(([hash, body]) => ({ hash, body })), ...applied.trees]);
  return yield* tx.putManifest(applied.root, "{}", applied.root);
}
