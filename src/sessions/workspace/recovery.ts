// After a crash in the middle of a workspace restore (a move with scope "files" or "both"): finish it, or for a
// "both" move whose conversation never moved, put the old files back. The restore was journaled before any file
// moved, and it leaves every file at its old or its new version; a file at neither (or missing where neither version
// lacks it), or a link or folder in the way, was put there by someone else: then nothing is written ("drift").
import type { Tx } from "../../store/port/index.js";
import { isLocal } from "./host.js";
import type { EngineContext } from "../core/context.js";
import { headAfter } from "../log/lineage.js";
import { SELF_START, isAlive } from "../moves/process-identity.js";
import { assertRestorable, removeStaged, restoreWorkspace, type Snapshot } from "./files.js";
import { blobsOf, manifestFiles, takeSnapshot, type RestoreJournal } from "./workspace.js";

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
    if (isAlive(journal.pid, journal.pidStart)) {
      done.push({ ...at, outcome: "waiting", paths: [], detail: `process ${journal.pid} is restoring it` });
      continue;
    }
    try {
      const result = await ctx.withSessionLock(row.sessionId, () => finishRestore(ctx, row.sessionId, row.restoring!));
      if (result) done.push({ ...at, ...result });
    } catch (error) {
      done.push({ ...at, outcome: "failed", paths: [], detail: (error as Error).message });
    }
  }
  return done;
}

type Outcome = Pick<WorkspaceRecovery, "outcome" | "paths" | "detail">;

async function finishRestore(ctx: EngineContext, sessionId: string, seen: string): Promise<Outcome | null> {
  const journal = JSON.parse(seen) as RestoreJournal;
  // Taken over in one write: of several processes recovering at once, one goes on; the others find it alive.
  const mine: RestoreJournal = { ...journal, pid: process.pid, pidStart: SELF_START, pids: [...new Set([...journal.pids, process.pid])] };
  const read = await ctx.store.write({ sessionId }, (tx) => claimRestoreUnit(tx, sessionId, seen, mine, journal));
  if (!read) return null;
  const { ws, goal, target, contents, versions, back } = read;
  const tracked = new Set([...Object.keys(versions[0]), ...Object.keys(versions[1])]);
  const removed = removeStaged(ws.dir, [...tracked], mine.pids, tracked);
  const drift = async (paths: string[], detail: string | null): Promise<Outcome> => {
    await ctx.store.write({ sessionId }, (tx) => tx.setWorkspaceRestoring(sessionId, null));
    return { outcome: "drift", paths, detail };
  };
  let disk: Snapshot;
  try {
    disk = takeSnapshot(ctx, ws).files;
  } catch (error) {
    return drift([], `the directory cannot be read: ${(error as Error).message}`);
  }
  const foreign = foreignPaths(versions[0], versions[1], disk);
  if (foreign.length > 0) return drift(foreign, null);
  const blocked = assertRestorable(ws.dir, Object.keys(target));
  if (blocked) return drift([], blocked);
  restoreWorkspace(ws.dir, disk, target, (hash) => contents.get(hash)!);
  await ctx.store.write({ sessionId }, (tx) => endRestoreUnit(tx, sessionId, goal, ctx));
  return { outcome: back ? "restored" : "completed", paths: removed, detail: null };
}

function* endRestoreUnit(tx: Tx, sessionId: string, goal: number, ctx: EngineContext) {
  yield* tx.setWorkspaceManifest(sessionId, goal, ctx.now());
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
  const target = yield* manifestFiles(tx, goal);
  const contents = yield* blobsOf(tx, Object.values(target));
  const versions = [yield* manifestFiles(tx, journal.fromManifestId), yield* manifestFiles(tx, journal.manifestId)] as const;
  return { ws, goal, target, contents, versions, back: goal !== journal.manifestId };
}

/** Paths the interrupted restore cannot explain: at neither version, or missing though both versions have them. */
function foreignPaths(before: Record<string, string>, after: Record<string, string>, disk: Snapshot): string[] {
  const foreign: string[] = [];
  for (const [path, file] of disk) {
    if (file.hash !== before[path] && file.hash !== after[path]) foreign.push(path);
  }
  for (const path of Object.keys(before)) {
    if (!disk.has(path) && path in after) foreign.push(path);
  }
  return foreign.sort();
}
