// After a crash in the middle of a workspace restore (a move with scope "files" or "both"): finish it. The restore
// was journaled before any file moved, and it leaves every file at its old or its new version; a file that is at
// neither (or missing where neither version lacks it) was changed by someone else, and is left as drift.
import type { EngineContext } from "./context.js";
import { isAlive } from "./process-identity.js";
import { blobOf, manifestFiles, takeSnapshot, type RestoreJournal } from "./workspace.js";
import { removeStaged, restoreWorkspace, type Snapshot } from "./workspace-files.js";

/** What recovery did with one interrupted workspace restore. */
export interface WorkspaceRecovery {
  sessionId: string;
  dir: string;
  /**
   * "completed": the directory now holds the restore's target. "drift": files changed by someone else since the
   * crash; nothing was written, the journal is cleared, and the next move reports them (`WORKSPACE_DRIFT`).
   * "waiting": the process writing it still runs.
   */
  outcome: "completed" | "drift" | "waiting";
  /** The paths at neither version ("drift"), or the leftover staged files removed ("completed"). */
  paths: string[];
}

export async function recoverWorkspaces(ctx: EngineContext): Promise<WorkspaceRecovery[]> {
  const rows = await ctx.store.read(() => ctx.store.restoringWorkspaces());
  const done: WorkspaceRecovery[] = [];
  for (const row of rows) {
    const journal = JSON.parse(row.restoring!) as RestoreJournal;
    if (isAlive(journal.pid, journal.pidStart)) {
      done.push({ sessionId: row.sessionId, dir: row.dir, outcome: "waiting", paths: [] });
      continue;
    }
    const result = await ctx.withSessionLock(row.sessionId, () => finishRestore(ctx, row.sessionId));
    if (result) done.push(result);
  }
  return done;
}

async function finishRestore(ctx: EngineContext, sessionId: string): Promise<WorkspaceRecovery | null> {
  const read = await ctx.store.read(() => {
    const ws = ctx.store.getWorkspace(sessionId);
    if (!ws?.restoring) return null; // finished meanwhile
    const journal = JSON.parse(ws.restoring) as RestoreJournal;
    const target = manifestFiles(ctx.store, journal.manifestId);
    const blob = blobOf(ctx.store);
    const contents = new Map([...new Set(Object.values(target))].map((hash) => [hash, blob(hash)] as const));
    return { ws, journal, known: manifestFiles(ctx.store, ws.manifestId), target, contents };
  });
  if (!read) return null;
  const { ws, journal, known, target, contents } = read;
  const removed = removeStaged(ws.dir, Object.keys(target));
  let disk: Snapshot | null = null;
  try {
    disk = takeSnapshot(ctx, ws).files;
  } catch {
    // Unreadable now (gone, a file over the size limit): nothing can be told apart, so nothing is written.
  }
  const foreign = disk ? foreignPaths(known, target, disk) : [];
  if (!disk || foreign.length > 0) {
    await ctx.store.write(() => ctx.store.setWorkspaceRestoring(sessionId, null));
    return { sessionId, dir: ws.dir, outcome: "drift", paths: foreign };
  }
  restoreWorkspace(ws.dir, disk, target, (hash) => contents.get(hash)!);
  await ctx.store.write(() => ctx.store.setWorkspaceManifest(sessionId, journal.manifestId, ctx.now()));
  return { sessionId, dir: ws.dir, outcome: "completed", paths: removed };
}

/** Paths the interrupted restore cannot explain: at neither version, or missing though both versions have them. */
function foreignPaths(known: Record<string, string>, target: Record<string, string>, disk: Snapshot): string[] {
  const foreign: string[] = [];
  for (const [path, file] of disk) {
    if (file.hash !== known[path] && file.hash !== target[path]) foreign.push(path);
  }
  for (const path of new Set([...Object.keys(known), ...Object.keys(target)])) {
    if (!disk.has(path) && path in known && path in target) foreign.push(path);
  }
  return foreign.sort();
}
