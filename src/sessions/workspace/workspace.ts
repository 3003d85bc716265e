// Workspaces: the files a session's directory holds, stored content-addressed with checkpoints, and restored by moves.
// diffFiles compares them; moves with scope "files" or "both" make the directory match the target again.
// Files changed outside forkpoint since it last saw them (drift) are never overwritten: the move is refused with a
// ConflictError, or, when forced, they are saved in a checkpoint first (workspace-force.ts). What forkpoint "last saw" moves only with its own doing: attach, checkpoints, restores, and the
// paths a tool call or a move's undo/replay changed (compared before and after), never a hand edit made before them.
import { assertLocal, isLocal } from "./host.js";
import { realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { ConflictError, IntegrityError, ValidationError } from "../../models/errors.js";
import type { CheckpointFilesRow, Step, Tx, WorkspaceRow } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { sha256 } from "../integrity/hashes.js";
import { SELF_START } from "../moves/process-identity.js";
import { assertRestorable, changedPaths, manifestOf, restoreWorkspace, scanWorkspace, type Snapshot } from "./files.js";

/** A snapshot read from disk for a workspace, with the configuration it was read under. */
export interface TakenSnapshot {
  dir: string;
  exclude: string;
  files: Snapshot;
}

/** Reads the workspace's files now (outside any transaction: it is file-system work). */
export function takeSnapshot(ctx: EngineContext, ws: Pick<WorkspaceRow, "dir" | "exclude">): TakenSnapshot {
  const exclude = JSON.parse(ws.exclude) as string[];
  const files = scanWorkspace(ws.dir, exclude, new Set(ctx.store.databaseFiles()), ctx.limits.maxPayloadBytes);
  return { dir: ws.dir, exclude: ws.exclude, files };
}

/** Stores a manifest (`{ path: hash }`) and the contents it needs that are new; returns its id. Inside a write unit. */
export function* saveManifest(tx: Tx, files: Record<string, string>, contents: ReadonlyMap<string, Buffer>): Step<number> {
  const manifest = manifestOf(files);
  const known = yield* tx.manifestId(manifest.hash);
  if (known !== undefined) return known;
  for (const hash of new Set(Object.values(manifest.files))) {
    const content = contents.get(hash);
    if (content) yield* tx.insertBlob(hash, content);
  }
  return yield* tx.putManifest(manifest.hash, manifest.body);
}

/** Stores a snapshot's contents and manifest (each once); returns the manifest id. Inside a write unit. */
export function* saveSnapshot(tx: Tx, snapshot: Snapshot): Step<number> {
  return yield* saveManifest(tx, manifestOf(snapshot).files, new Map([...snapshot.values()].map((f) => [f.hash, f.content])));
}

export function* manifestFiles(tx: Tx, manifestId: number): Step<Record<string, string>> {
  const manifest = yield* tx.getManifest(manifestId);
  if (!manifest) throw new IntegrityError(`the workspace snapshot ${manifestId} is missing from the database`);
  return JSON.parse(manifest.body) as Record<string, string>;
}

/** A stored file content, checked against its address: a damaged blob is never written or shown. */
export function* blobOf(tx: Tx, hash: string): Step<Buffer> {
  const content = yield* tx.getBlob(hash);
  if (!content || sha256(content) !== hash) {
    throw new IntegrityError(`stored file content ${hash} is missing or does not match its hash`);
  }
  return content;
}

/** The stored contents of `hashes`, each checked (see `blobOf`). */
export function* blobsOf(tx: Tx, hashes: Iterable<string>): Step<Map<string, Buffer>> {
  const contents = new Map<string, Buffer>();
  for (const hash of new Set(hashes)) contents.set(hash, yield* blobOf(tx, hash));
  return contents;
}

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

/** A snapshot is only ever compared with or restored to the directory and exclude list it was read under. */
export function sameConfig(files: CheckpointFilesRow, ws: WorkspaceRow, field: string, what: string): CheckpointFilesRow {
  if (files.dir !== ws.dir || files.exclude !== ws.exclude) {
    throw new ValidationError(
      field,
      `${what} captured ${files.dir} with exclude ${files.exclude}; the workspace is now ${ws.dir} with exclude ${ws.exclude}`,
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
      `checkpoint ${checkpointId} holds no files (automatic checkpoints, and those taken without a workspace, capture none)`,
    );
  return files;
}

/**
 * The files a move's target should have: the checkpoint's own when the move goes to one, else those of the newest
 * checkpoint with files on the target lineage at or before the target position. Read under the current workspace
 * configuration only.
 */
export function* targetFiles(
  tx: Tx,
  ws: WorkspaceRow,
  target: { branchId: string; position: number },
  checkpointId: string | null,
): Step<number> {
  let found = checkpointId ? yield* tx.checkpointManifest(checkpointId) : undefined;
  const segments = yield* tx.lineage(target.branchId, target.position);
  for (let i = segments.length - 1; i >= 0 && !found; i--) {
    const s = segments[i]!;
    found = yield* tx.lastCheckpointFiles(s.branchId, s.after, s.upTo);
  }
  if (!found) throw new ValidationError("scope", "no checkpoint on the target's lineage captured the workspace's files");
  return sameConfig(found, ws, "scope", "the target's checkpoint").manifestId;
}

/**
 * Everything a restore needs, checked before anything moves: no move of the session running its tools, no drift
 * (files changed outside forkpoint since it last saw them), every content present and intact, no symbolic link or
 * file in the way of a path to write.
 * With `allowDrift`, drift is reported in `drifted` instead of refused (a forced move saves it first); everything
 * else is still checked, so a forced move that cannot be done is refused before it saves anything.
 */
export async function prepareRestore(
  ctx: EngineContext,
  ws: WorkspaceRow,
  manifestId: number,
  allowDrift = false,
): Promise<PreparedRestore> {
  assertNoRestorePending(ws);
  const disk = takeSnapshot(ctx, ws).files;
  const { known, target, contents } = await ctx.store.read((tx) => prepareRestoreUnit(tx, ws, manifestId));
  const drifted = changedPaths(known, manifestOf(disk).files);
  if (drifted.length > 0 && !allowDrift) {
    const shown = drifted.slice(0, 10).join(", ") + (drifted.length > 10 ? `, and ${drifted.length - 10} more` : "");
    throw new ConflictError(
      `the workspace ${ws.dir} changed outside forkpoint since it last saw it (${shown}); take a checkpoint to keep those changes, then move`,
      "WORKSPACE_DRIFT",
    );
  }
  const blocked = assertRestorable(ws.dir, Object.keys(target));
  if (blocked) throw new ConflictError(`cannot restore the workspace ${ws.dir}: ${blocked}`, "WORKSPACE_DRIFT");
  return { ws, manifestId, target, contents, drifted };
}

function* prepareRestoreUnit(tx: Tx, ws: WorkspaceRow, manifestId: number) {
  yield* assertNoMoveRunning(tx, ws);
  const target = yield* manifestFiles(tx, manifestId);
  const contents = yield* blobsOf(tx, Object.values(target));
  return { known: yield* manifestFiles(tx, ws.manifestId), target, contents };
}

export interface PreparedRestore {
  ws: WorkspaceRow;
  manifestId: number;
  target: Record<string, string>;
  contents: Map<string, Buffer>;
  /** Paths changed outside forkpoint (added, modified or deleted): none unless `allowDrift` was given. */
  drifted: string[];
}

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
  move: Pick<RestoreJournal, "scope" | "fromBranchId" | "fromHead">,
): Promise<{ written: string[]; deleted: string[] }> {
  const current = takeSnapshot(ctx, p.ws).files;
  const journal: RestoreJournal = {
    ...move,
    manifestId: p.manifestId,
    fromManifestId: p.ws.manifestId,
    pid: process.pid,
    pidStart: SELF_START,
    pids: [process.pid],
  };
  await ctx.store.write({ sessionId }, (tx) => startFilesRestoreUnit(tx, sessionId, p, journal));
  let changed: { written: string[]; deleted: string[] };
  try {
    changed = restoreWorkspace(p.ws.dir, current, p.target, (hash) => p.contents.get(hash)!);
  } catch (error) {
    // Failed before any file moved (staging): nothing to finish, so no journal. Otherwise recovery finishes it.
    if (unchangedSince(ctx, p.ws, current)) await endRestore(ctx, sessionId);
    throw error;
  }
  await ctx.store.write({ sessionId }, (tx) => endFilesRestoreUnit(tx, sessionId, journal, ctx, move));
  return changed;
}

function* endFilesRestoreUnit(
  tx: Tx,
  sessionId: string,
  journal: RestoreJournal,
  ctx: EngineContext,
  move: Pick<RestoreJournal, "scope" | "fromBranchId" | "fromHead">,
) {
  yield* tx.setWorkspaceManifest(sessionId, journal.manifestId, ctx.now());
  if (move.scope === "files") yield* tx.setWorkspaceRestoring(sessionId, null);
}

function* startFilesRestoreUnit(tx: Tx, sessionId: string, p: PreparedRestore, journal: RestoreJournal) {
  // Another process (or handle) may have restored, re-attached or pruned since `prepareRestore` checked: the
  // journal is written only onto the workspace that was checked, and no other restore can start once it is.
  const now = yield* tx.getWorkspace(sessionId);
  if (now?.restoring) {
    throw new ConflictError(`the workspace ${p.ws.dir} is being restored by another move; try again when it ends`, "MOVE_IN_PROGRESS");
  }
  yield* assertNoMoveRunning(tx, p.ws);
  if (!now || now.manifestId !== p.ws.manifestId || now.dir !== p.ws.dir || now.exclude !== p.ws.exclude) {
    throw new ConflictError(
      `the workspace ${p.ws.dir} changed (another process moved or re-attached it) since this move checked it; move again`,
      "WORKSPACE_DRIFT",
    );
  }
  // The target's snapshot, stored again if a prune took it since it was read (otherwise its id, unchanged).
  journal.manifestId = yield* saveManifest(tx, p.target, p.contents);
  yield* tx.setWorkspaceRestoring(sessionId, JSON.stringify(journal));
}

/** Clears the restore journal: the move it belonged to is over (done, or refused with nothing moved). */
export async function endRestore(ctx: EngineContext, sessionId: string): Promise<void> {
  await ctx.store.write({ sessionId }, (tx) => tx.setWorkspaceRestoring(sessionId, null));
}

export function unchangedSince(ctx: EngineContext, ws: WorkspaceRow, before: Snapshot): boolean {
  try {
    return changedPaths(manifestOf(before).files, manifestOf(takeSnapshot(ctx, ws).files).files).length === 0;
  } catch {
    return false;
  }
}

/** What `workspaces.restoring` holds while a restore runs. */
export interface RestoreJournal {
  /** The files being written, and those the directory held before. */
  manifestId: number;
  fromManifestId: number;
  /** "both": the conversation moves after the files; recovery checks whether it did. */
  scope: "files" | "both";
  fromBranchId: string;
  fromHead: number;
  /** The thread writing it now, and every process that staged files for it (their leftovers carry the pid). */
  pid: number;
  pidStart: string;
  pids: number[];
}

/** A ConflictError while a restore of the workspace is interrupted or running: recovery must finish it first. */
export function assertNoRestorePending(ws: WorkspaceRow): void {
  if (ws.restoring) {
    throw new ConflictError(
      `a restore of the workspace ${ws.dir} was interrupted or is running: fp.recover() finishes it (opening the database does too)`,
      "MOVE_IN_PROGRESS",
    );
  }
}

/**
 * A ConflictError while a move of the session's world runs its tools (in any process): their undo and replay handlers
 * change these files, and a restore under them would overwrite what they do, or be taken for drift.
 */
export function* assertNoMoveRunning(tx: Tx, ws: WorkspaceRow): Step<void> {
  const running = yield* tx.runningMoves(ws.sessionId);
  if (running.length === 0) return;
  throw new ConflictError(
    `a move of this session is under way (${running.map((m) => `${m.id}, process ${m.pid}`).join("; ")}) and its tools change the workspace ${ws.dir}; ` +
      "try again when it ends, or call fp.recover() if its process died",
    "MOVE_IN_PROGRESS",
  );
}

/** The workspace's files before forkpoint's own doing (a tool call, a move), or null without a workspace. */
export function filesBefore(ctx: EngineContext, ws: WorkspaceRow | undefined): Snapshot | null {
  // Another host's directory: nothing of it is read here, and what a tool changes there stays drift.
  if (!ws || !isLocal(ws)) return null;
  try {
    return takeSnapshot(ctx, ws).files;
  } catch {
    return null; // unreadable now: what follows is then not absorbed, and shows as drift
  }
}

/**
 * After forkpoint's own doing: the paths that changed since `before` become known (not drift). Changes made by hand
 * earlier stay drift. Never throws: a scan that fails leaves the changes as drift.
 */
export async function absorbChanges(ctx: EngineContext, sessionId: string, before: Snapshot | null): Promise<void> {
  if (!before) return;
  try {
    const ws = await ctx.store.read((tx) => tx.getWorkspace(sessionId));
    if (!ws) return;
    const after = takeSnapshot(ctx, ws).files;
    const touched = changedPaths(manifestOf(before).files, manifestOf(after).files);
    if (touched.length === 0) return;
    await ctx.store.write({ sessionId }, (tx) => absorbChangesUnit(tx, sessionId, touched, after, ctx));
  } catch (error) {
    // The tool call or move itself succeeded; its file changes then count as drift until the next checkpoint.
    ctx.logger.warn(`forkpoint: scanning the workspace of session ${sessionId} after a tool ran failed; its changes count as drift`, error);
  }
}

function* absorbChangesUnit(tx: Tx, sessionId: string, touched: string[], after: Snapshot, ctx: EngineContext) {
  const current = (yield* tx.getWorkspace(sessionId))!;
  const known = yield* manifestFiles(tx, current.manifestId);
  for (const path of touched) {
    const file = after.get(path);
    if (file) known[path] = file.hash;
    else delete known[path];
  }
  const contents = new Map(
    touched.flatMap((path) => (after.has(path) ? [[after.get(path)!.hash, after.get(path)!.content] as const] : [])),
  );
  yield* tx.setWorkspaceManifest(sessionId, yield* saveManifest(tx, known, contents), ctx.now());
}

/** Problems with the files a checkpoint captured (for `verify`): the manifest and every content against their hashes. */
export function* checkpointFilesProblems(tx: Tx, checkpointId: string): Step<string[]> {
  const files = yield* tx.checkpointManifest(checkpointId);
  if (!files) return [];
  const manifest = yield* tx.getManifest(files.manifestId);
  const paths = manifest ? (JSON.parse(manifest.body) as Record<string, string>) : null;
  if (!manifest || !paths || manifestOf(paths).hash !== manifest.hash) return ["its file manifest is missing or does not match its hash"];

  const problems: string[] = [];
  for (const [path, hash] of Object.entries(paths)) {
    try {
      yield* blobOf(tx, hash);
    } catch {
      problems.push(`its file ${path} is missing or does not match its hash`);
    }
  }
  return problems;
}
