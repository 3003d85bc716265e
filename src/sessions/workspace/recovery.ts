// After a crash in the middle of a workspace restore (a move with scope "files" or "both"): finish it, or for a
// "both" move whose conversation never moved, put the old files back. The restore was journaled before any file
// moved, and it leaves every file at its old or its new version; a file at neither (or missing where neither version
// lacks it), or a link or folder in the way, was put there by someone else: then nothing is written ("drift").
import { ForkpointError, ValidationError } from "../../models/errors.js";
import type { StatRow, Tx } from "../../store/port/index.js";
import { isLocal } from "./host.js";
import type { EngineContext } from "../core/context.js";
import { headAfter } from "../core/head.js";
import { SELF_START, isAlive } from "../core/process-identity.js";
import { contentOf } from "./file-id.js";
import { assertRestorable, restoreChanges } from "./files.js";
import { removeStaged } from "./staged.js";
import { TreeReader, diffTrees, listFiles } from "./trees.js";
import { readBlobs } from "./packs.js";
import { scan, scanContext, stateOf, type WorkspaceState } from "./state.js";
import { contentsFor } from "./prepare-restore.js";
import { inflightRestores, type RestoreJournal } from "./restore-guards.js";
import { recordRestored } from "./restore.js";
import { stillIs } from "./cache-writes.js";
import { applyTrackPlan, type TrackPlan } from "./track-plan.js";

/** What recovery did with one interrupted workspace restore. */
export interface WorkspaceRecovery {
  sessionId: string;
  dir: string;
  /**
   * "completed": the directory now holds the move's target files. "restored": a "both" move crashed before its
   * conversation moved, so the directory holds its files from before the move again. "drift": something in the
   * directory was changed by someone else since; nothing was written, the journal is cleared, and the next move
   * reports it (`WORKSPACE_DRIFT`). "waiting": another live process is writing it. "failed": it could not be
   * finished now (`detail` says why); the journal stays, so a later `fp.recover()` tries again.
   */
  outcome: "completed" | "restored" | "drift" | "waiting" | "failed";
  /** The paths at neither version ("drift"), or the staged leftovers removed. */
  paths: string[];
  /** Why, for "drift" caused by a link or folder in the way, "waiting" and "failed". */
  detail: string | null;
}

export async function recoverWorkspaces(ctx: EngineContext): Promise<WorkspaceRecovery[]> {
  const rows = await ctx.store.read((tx) => tx.restoringWorkspaces());
  const done: WorkspaceRecovery[] = [];
  for (const row of rows) {
    const at = { sessionId: row.sessionId, dir: row.dir };
    const journal = JSON.parse(row.restoring!) as RestoreJournal;
    // Its directory is on the host that attached it: only that host finishes the restore.
    if (!isLocal(row)) {
      done.push({ ...at, outcome: "waiting", paths: [], detail: `its directory is on host ${JSON.stringify(row.host)}` });
      continue;
    }
    // This thread's own journal counts as a dead one's (its move failed midway), unless it is restoring it right now.
    if (isAlive(journal.pid, journal.pidStart) || inflightRestores.has(row.sessionId)) {
      done.push({ ...at, outcome: "waiting", paths: [], detail: `process ${journal.pid} is restoring it` });
      continue;
    }
    inflightRestores.add(row.sessionId);
    try {
      // As recovery: a write queued on the session may be what asked for it (see write-queue.ts).
      const result = await ctx.withSessionLock(
        row.sessionId,
        () => finishRestore(ctx, row.sessionId, row.restoring!),
        "exclusive",
        "recover",
      );
      if (result) done.push({ ...at, ...result });
    } catch (error) {
      done.push({ ...at, outcome: "failed", paths: [], detail: (error as Error).message });
    } finally {
      inflightRestores.delete(row.sessionId);
    }
  }
  return done;
}

type Outcome = Pick<WorkspaceRecovery, "outcome" | "paths" | "detail">;

async function finishRestore(ctx: EngineContext, sessionId: string, seen: string): Promise<Outcome | null> {
  const journal = JSON.parse(seen) as RestoreJournal;
  // Taken over in one write: of several processes recovering at once, one goes on; the others find it alive.
  const mine: RestoreJournal = { ...journal, pid: process.pid, pidStart: SELF_START, pids: [...new Set([...journal.pids, process.pid])] };
  const read = await claimed(ctx, sessionId, seen, mine, journal);
  if (!read) return null;
  try {
    return await finishClaimed(ctx, sessionId, journal, read);
  } catch (error) {
    // Not finished now: the journal goes back to what it was, so that a later recover() (in this process too) tries again.
    await ctx.store.write({ sessionId }, (tx) => tx.claimWorkspaceRestore(sessionId, JSON.stringify(mine), seen));
    throw error;
  }
}

async function finishClaimed(
  ctx: EngineContext,
  sessionId: string,
  journal: RestoreJournal,
  read: NonNullable<Awaited<ReturnType<typeof claimed>>>,
): Promise<Outcome> {
  const { ws, goal, back, paths, tracked } = read;
  const removed = removeStaged(ws.dir, paths, journal.pids.includes(process.pid) ? journal.pids : [...journal.pids, process.pid], (p) =>
    tracked.has(p),
  );
  const drift = async (foreign: string[], detail: string | null): Promise<Outcome> => {
    await ctx.store.write({ sessionId }, (tx) => tx.setWorkspaceRestoring(sessionId, null));
    return { outcome: "drift", paths: foreign, detail };
  };
  // The directory as it is now: walked whole (no watcher saw what happened while no process ran).
  const state = await stateOf(ctx, ws);
  const planned = await state
    .exclusive(async () => {
      state.walked = false;
      await scan(ctx, state);
      return ctx.store.read((tx) => planUnit(tx, state, journal, goal));
    })
    .catch((error: unknown) => error as Error);
  if (planned instanceof Error) {
    if (planned instanceof ForkpointError && !(planned instanceof ValidationError)) throw planned;
    return drift([], `the directory cannot be read: ${planned.message}`);
  }
  if (planned.foreign.length > 0) return drift(planned.foreign, null);
  const blocked = assertRestorable(ws.dir, planned.changes);
  if (blocked) return drift([], blocked);
  await state.exclusive(async () => {
    const still = (path: string, from: string | null) => stillIs(state.cache, ws.dir, path, from);
    const done = await restoreChanges(ws.dir, planned.changes, contentsFor(ctx, planned.contents), { any: false }, still);
    recordRestored(state, scanContext(ctx, state, null), planned.changes, done);
  });
  const stats = state.cache.toRows();
  // A files-only restore's track plan comes with the files it finishes.
  const track = !back && journal.scope === "files" ? journal.track : undefined;
  await ctx.store.write({ sessionId }, (tx) => endRestoreUnit(tx, sessionId, goal, ctx, stats, track));
  state.cache.markStored(stats);
  return { outcome: back ? "restored" : "completed", paths: removed, detail: null };
}

const claimed = (ctx: EngineContext, sessionId: string, seen: string, mine: RestoreJournal, journal: RestoreJournal) =>
  ctx.store.write({ sessionId }, (tx) => claimRestoreUnit(tx, sessionId, seen, mine, journal));

function* endRestoreUnit(
  tx: Tx,
  sessionId: string,
  goal: number,
  ctx: EngineContext,
  stats: { rows: StatRow[]; deleted: string[] },
  track: TrackPlan | undefined,
) {
  yield* tx.setWorkspaceManifest(sessionId, goal, ctx.now());
  yield* tx.putWorkspaceStats(sessionId, stats.rows, stats.deleted);
  if (track) yield* applyTrackPlan(tx, sessionId, track, ctx.now());
  yield* tx.setWorkspaceRestoring(sessionId, null);
}

function* claimRestoreUnit(tx: Tx, sessionId: string, seen: string, mine: RestoreJournal, journal: RestoreJournal) {
  if (!(yield* tx.claimWorkspaceRestore(sessionId, seen, JSON.stringify(mine)))) return null;
  const ws = (yield* tx.getWorkspace(sessionId))!;
  const current = (yield* tx.currentOf(sessionId))!;
  const branch = current.branch;
  const head = yield* headAfter(tx, branch, current.last);
  // "both": the conversation moved (or a journaled move of it will be resumed) → finish; otherwise go back.
  const moved = branch.id !== journal.fromBranchId || head.position !== journal.fromHead || (yield* tx.runningMoves(sessionId)).length > 0;
  const goal = journal.scope === "both" && !moved ? journal.fromManifestId : journal.manifestId;
  // Staged leftovers beside either version's files are forkpoint's, unless a version has a file of that name.
  const reader = new TreeReader();
  const tracked = new Set<string>();
  for (const id of [journal.fromManifestId, journal.manifestId])
    for (const [path] of yield* listFiles(tx, reader, yield* reader.rootOf(tx, id))) tracked.add(path);
  return { ws, goal, back: goal !== journal.manifestId, paths: [...tracked], tracked };
}

/**
 * What finishing takes: the paths the restore cannot explain (at neither version, or missing though both versions
 * have them), the changes from the directory now to the goal, and their contents (checked).
 */
function* planUnit(tx: Tx, state: WorkspaceState, journal: RestoreJournal, goal: number) {
  const reader = new TreeReader();
  const before = yield* reader.rootOf(tx, journal.fromManifestId);
  const after = yield* reader.rootOf(tx, journal.manifestId);
  const target = yield* reader.rootOf(tx, goal);
  const notBefore = new Set((yield* diffTrees(tx, reader, state.cache.root, before)).map((c) => c.path));
  const foreign = (yield* diffTrees(tx, reader, state.cache.root, after)).map((c) => c.path).filter((p) => notBefore.has(p));
  const leave = new Set(journal.leave ?? []);
  const changes = (yield* diffTrees(tx, reader, state.cache.root, target)).filter((c) => !leave.has(c.path));
  const contents =
    foreign.length > 0
      ? new Map<string, Buffer>()
      : yield* readBlobs(
          tx,
          changes.flatMap((c) => (c.to === null ? [] : [contentOf(c.to)])),
        );
  return { foreign, changes, contents };
}
