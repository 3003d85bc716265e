// Which stored snapshot a call works on: the session's workspace and the configuration a snapshot was read under,
// the files a checkpoint (or a move's target) captured, and what two snapshots (or one and the disk) differ by.
import { realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { ValidationError } from "../../models/errors.js";
import type { CheckpointFilesRow, Step, Tx, WorkspaceRow } from "../../store/port/index.js";
import type { DirNode } from "./dir-node.js";
import { assertLocal } from "./host.js";
import { newestSnapshot } from "./newest-snapshot.js";
import { TreeReader, diffTrees, listFiles, type FileChange } from "./trees.js";
import { sameExclude } from "./exclude-list.js";

/** The configuration a snapshot is read under (its directory and ignore rules), as the workspace row has it. */
export type FilesConfig = Pick<WorkspaceRow, "dir" | "exclude" | "gitignore">;

/** Whether a snapshot was read under the workspace's current configuration (the same rules, however listed). */
export const sameFilesConfig = (a: FilesConfig, b: FilesConfig): boolean =>
  a.dir === b.dir && sameExclude(a.exclude, b.exclude) && Boolean(a.gitignore) === Boolean(b.gitignore);

/** The real path of a directory, so the database's own files are recognized however the path was spelled. */
export function realDir(dir: string): string | null {
  try {
    const real = realpathSync(resolve(dir));
    return statSync(real).isDirectory() ? real : null;
  } catch {
    return null;
  }
}

/**
 * The session's workspace, or a ValidationError naming what needs one. `onDisk`: `what` reads or writes its directory,
 * so the workspace must be this host's (comparing stored snapshots works from any host).
 */
export function* workspaceOf(tx: Tx, sessionId: string, what: string, onDisk = true): Step<WorkspaceRow> {
  const ws = yield* tx.getWorkspace(sessionId);
  if (!ws) throw new ValidationError(what, "the session has no workspace: call attachWorkspace(dir) first");
  if (onDisk) assertLocal(ws, what);
  return ws;
}

/** A snapshot is only ever compared with or restored to the directory and ignore rules it was read under. */
export function sameConfig(files: CheckpointFilesRow, ws: WorkspaceRow, field: string, what: string): CheckpointFilesRow {
  if (!sameFilesConfig(files, ws)) {
    const rules = (c: FilesConfig) => `exclude ${c.exclude}${c.gitignore ? " and its .gitignore files" : ""}`;
    throw new ValidationError(
      field,
      `${what} captured ${files.dir} with ${rules(files)}; the workspace is now ${ws.dir} with ${rules(ws)}`,
    );
  }
  return files;
}

/** The files a checkpoint captured. */
export function* checkpointFiles(tx: Tx, checkpointId: string, field: string): Step<CheckpointFilesRow> {
  const files = yield* tx.checkpointManifest(checkpointId);
  if (!files)
    throw new ValidationError(
      field,
      `checkpoint ${checkpointId} holds no files (automatic checkpoints, and those taken without a workspace, capture ` +
        "none; nor do an imported or cloned session's: exports carry no files)",
    );
  return files;
}

/**
 * The files a move's target should have: the checkpoint's own when the move goes to one, else those of the newest
 * checkpoint with files on the target lineage at or before the target position that holds no call set aside there
 * (see `newestSnapshot`). Read under the current workspace configuration only.
 */
export function* targetFiles(
  tx: Tx,
  ws: WorkspaceRow,
  target: { branchId: string; position: number },
  checkpointId: string | null,
): Step<number> {
  const found =
    (checkpointId ? yield* tx.checkpointManifest(checkpointId) : undefined) ?? (yield* newestSnapshot(tx, ws.sessionId, target))?.files;
  if (!found) throw new ValidationError("scope", "no checkpoint on the target's lineage captured the workspace's files");
  return sameConfig(found, ws, "scope", "the target's checkpoint").manifestId;
}

/** The files of a stored snapshot (path, hash), in path order. */
export function* snapshotFiles(tx: Tx, manifestId: number): Step<[string, string][]> {
  const reader = new TreeReader();
  return yield* listFiles(tx, reader, yield* reader.rootOf(tx, manifestId));
}

/** The changes between two stored snapshots (`to` null: the directory now, read through the stat cache). */
export function* snapshotChanges(tx: Tx, from: number, to: number | DirNode): Step<FileChange[]> {
  const reader = new TreeReader();
  const a = yield* reader.rootOf(tx, from);
  const b = typeof to === "number" ? yield* reader.rootOf(tx, to) : to;
  return yield* diffTrees(tx, reader, a, b);
}
