// Workspaces: the files a session's directory holds, stored with checkpoints as trees of hashed directories (shared
// between snapshots) over contents stored once, compressed; restored by moves. diffFiles compares them; moves with scope
// "files" or "both" make the directory match the target again, writing only the files that differ.
// Over 450 lines: capture, diff and restore still live here together; they split by job (capture.ts, restore) next.
// Files changed outside forkpoint since it last saw them (drift) are never overwritten: the move is refused with a
// ConflictError, or, when forced, they are saved in a checkpoint first (force.ts). What forkpoint "last saw" moves only
// with its own doing: attach, checkpoints, restores, and the paths a tool call or a move's undo/replay changed (tracked
// from before to after), never a hand edit made before them.
import { assertLocal, isLocal } from "./host.js";
import { lstatSync, readFileSync, realpathSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { ConflictError, NotFoundError, ValidationError } from "../../models/errors.js";
import type { CheckpointFilesRow, Step, StatRow, TreeRow, Tx, WorkspaceRow } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { sha256 } from "../integrity/hashes.js";
import { SELF_START } from "../moves/process-identity.js";
import { assertRestorable, restoreChanges } from "./files.js";
import {
  PackWriter,
  TreeReader,
  applyChanges,
  diffTrees,
  listFiles,
  packCacheOf,
  readBlobs,
  type FileChange,
  type PackCache,
} from "./objects.js";
import {
  EMPTY_TREE,
  EMPTY_TREE_BODY,
  deletedFile,
  isDir,
  treeBody,
  treeHash,
  walkTree,
  wroteFile,
  type DirNode,
  type StatRows,
} from "./stat-cache.js";
import { scan, scanContext, stateOf, type WorkspaceConfig, type WorkspaceState } from "./state.js";

/** The configuration a snapshot is read under (its directory and ignore rules), as the workspace row has it. */
export type FilesConfig = Pick<WorkspaceRow, "dir" | "exclude" | "gitignore">;

/** Whether a snapshot was read under the workspace's current configuration. */
export const sameFilesConfig = (a: FilesConfig, b: FilesConfig): boolean =>
  a.dir === b.dir && a.exclude === b.exclude && Boolean(a.gitignore) === Boolean(b.gitignore);

/**
 * A snapshot of the directory ready to be stored: its root tree, the trees and contents it adds to the snapshot it
 * was compared with (`base`, the workspace's manifest then), and the stat cache's changed rows.
 */
export interface Capture extends FilesConfig {
  sessionId: string;
  /** The workspace's manifest the capture was compared with (null: none, when attaching). */
  base: number | null;
  root: string;
  trees: TreeRow[];
  /** Content hashes the snapshot has and `base` has not: each must be stored. */
  contents: string[];
  stats: StatRows;
  files: number;
}

/**
 * The directories of the cache not in the snapshot `base` and the contents it adds (compared a level at a time); with
 * no base (or one stored before trees, which has no tree to share), every directory and content.
 */
function* captureOf(tx: Tx, state: WorkspaceState, config: FilesConfig & { sessionId: string }, base: number | null): Step<Capture> {
  const reader = new TreeReader();
  const baseRoot = base === null ? null : yield* reader.rootOf(tx, base);
  const shared = baseRoot !== null && !reader.ephemeral.has(baseRoot) ? baseRoot : null;
  const trees: TreeRow[] = [];
  const cacheRoot = state.cache.root;
  const root = treeHash(cacheRoot) ?? EMPTY_TREE;
  if (root === EMPTY_TREE) trees.push({ hash: EMPTY_TREE, body: EMPTY_TREE_BODY });
  let contents: string[];
  if (shared === null) {
    const seen = new Set<string>();
    const visit = (node: DirNode) => {
      const hash = treeHash(node);
      if (hash === null) return;
      trees.push({ hash, body: treeBody(node) });
      for (const e of node.entries.values())
        if (isDir(e)) visit(e);
        else seen.add(e.hash);
    };
    visit(cacheRoot);
    contents = [...seen];
  } else {
    const changes = yield* diffTrees(tx, reader, cacheRoot, shared, (node: DirNode, hash: string) =>
      trees.push({ hash, body: treeBody(node) }),
    );
    contents = [...new Set(changes.flatMap((c) => (c.from === null ? [] : [c.from])))];
  }
  return {
    sessionId: config.sessionId,
    dir: config.dir,
    exclude: config.exclude,
    gitignore: config.gitignore,
    base,
    root,
    trees,
    contents,
    stats: state.cache.toRows(),
    files: state.cache.count(),
  };
}

/** Those of `hashes` that are stored (asked a thousand at a time). */
function* storedOf(tx: Tx, hashes: readonly string[]): Step<Set<string>> {
  const present = new Set<string>();
  for (let i = 0; i < hashes.length; i += 1000) for (const h of yield* tx.presentBlobs(hashes.slice(i, i + 1000))) present.add(h);
  return present;
}

/** The files of the cache whose content is one of `hashes` (path, hash). */
function filesWith(state: WorkspaceState, hashes: ReadonlySet<string>): { path: string; hash: string }[] {
  const out: { path: string; hash: string }[] = [];
  if (hashes.size > 0) for (const [path, e] of state.cache.files()) if (hashes.has(e.hash)) out.push({ path, hash: e.hash });
  return out;
}

/**
 * Reads the workspace's files now, outside any transaction (file-system work), storing the contents it reads that are
 * new; the returned capture is stored by `saveCapture`. `base` null: compared with no snapshot (attach).
 */
export async function takeCapture(
  ctx: EngineContext,
  ws: WorkspaceConfig & { manifestId: number | null },
  how: { fresh?: boolean; allRows?: boolean } = {},
): Promise<Capture> {
  const state = await stateOf(ctx, ws, how.fresh ?? false);
  return state.exclusive(async () => {
    // Attaching clears the stored cache: every row is stored again.
    if (how.allRows) state.cache.markAllUnstored();
    for (let attempt = 0; ; attempt++) {
      await scan(ctx, state, new PackWriter());
      const taken = await ctx.store.read((tx) => takeCaptureUnit(tx, state, ws));
      if (taken.missing.length === 0 || attempt === 3) return taken.capture;
      // Contents read before without being stored (a scan for a diff or a drift check): read and stored now. A file
      // that changed meanwhile is looked at again by the next scan.
      const writer = new PackWriter();
      const sc = scanContext(ctx, state, null);
      let changed = false;
      for (const { path, hash } of taken.missing) {
        const content = readIfStill(sc.root, path, hash);
        if (content) writer.add(hash, content);
        else (state.pending.dirty.add(path), (changed = true));
        if (writer.pendingBytes >= 4 << 20) await writer.persist(ctx.store, ws.sessionId);
      }
      await writer.persist(ctx.store, ws.sessionId);
      if (!changed) return taken.capture;
    }
  });
}

function* takeCaptureUnit(tx: Tx, state: WorkspaceState, ws: WorkspaceConfig & { manifestId: number | null }) {
  const current = ws.manifestId === null ? null : ((yield* tx.getWorkspace(ws.sessionId))?.manifestId ?? null);
  const capture = yield* captureOf(tx, state, ws, current);
  const present = yield* storedOf(tx, capture.contents);
  const missing = filesWith(state, new Set(capture.contents.filter((h) => !present.has(h))));
  return { capture, missing };
}

/** The file's content if it still has hash `hash`. */
function readIfStill(root: string, path: string, hash: string): Buffer | null {
  try {
    const content = readFileAt(root, path);
    return sha256(content) === hash ? content : null;
  } catch {
    return null;
  }
}

/**
 * Whether the capture can be stored in this transaction: the workspace's manifest is still the one it was compared
 * with (else another process moved it) and every content it adds is stored (else a prune took one meanwhile). Reads
 * only: the checkpoint asks for a new capture when it cannot.
 */
export function* captureStorable(tx: Tx, capture: Capture, ws: WorkspaceRow | undefined): Step<boolean> {
  if (capture.base !== null && ws?.manifestId !== capture.base) return false;
  return (yield* storedOf(tx, capture.contents)).size === capture.contents.length;
}

/** Stores the capture's trees and manifest (then `saveCaptureStats`); returns the manifest id. Inside a write unit. */
export function* saveCapture(tx: Tx, capture: Capture): Step<number> {
  yield* tx.insertTrees(capture.trees);
  return yield* tx.putManifest(capture.root, "{}", capture.root);
}

/** Stores the stat cache's rows the capture changed. Inside a write unit, after the workspace row is written. */
export function* saveCaptureStats(tx: Tx, capture: Capture): Step<void> {
  yield* tx.putWorkspaceStats(capture.sessionId, capture.stats.rows, capture.stats.deleted);
}

/** Marks the capture's stat rows as stored (after its transaction committed). */
export async function captureStored(ctx: EngineContext, capture: Capture): Promise<void> {
  const state = await stateOf(ctx, capture);
  state.cache.markStored(capture.stats);
}

/**
 * Captures the workspace synchronously, inside a transaction (an edit's checkpoint, written in its move's transaction:
 * only then are the files those the move left). A whole walk: no watcher is asked (that needs the event loop).
 */
export function* captureNow(ctx: EngineContext, tx: Tx, state: WorkspaceState, ws: WorkspaceRow): Step<number> {
  const writer = new PackWriter();
  // The contents read are stored as they pile up (the walk yields when the writer's buffer is full).
  for (const walk = walkTree(state.cache, scanContext(ctx, state, writer), state.cache.root, ""); !walk.next().done;)
    yield* writer.flush(tx);
  for (const k of Object.values(state.pending)) k.clear();
  yield* writer.flush(tx);
  const capture = yield* captureOf(tx, state, ws, ws.manifestId);
  const present = yield* storedOf(tx, capture.contents);
  for (const { path, hash } of filesWith(state, new Set(capture.contents.filter((h) => !present.has(h))))) {
    const content = readIfStill(ws.dir, path, hash);
    if (!content) throw new ConflictError(`the workspace ${ws.dir} changed while it was read (${path}); try again`, "WORKSPACE_DRIFT");
    writer.add(hash, content);
  }
  yield* writer.flush(tx);
  const manifestId = yield* saveCapture(tx, capture);
  yield* saveCaptureStats(tx, capture);
  state.cache.markStored(capture.stats);
  return manifestId;
}

const readFileAt = (root: string, path: string) => readFileSync(`${root}/${path}`);

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

/** Contents a prepared restore keeps in memory; past this, they are checked, dropped, and read again to be written. */
const KEEP_BYTES = 64 << 20;

/** Paths shown in a drift refusal: the first ten, and how many more. */
const shownPaths = (paths: readonly string[]) =>
  paths.slice(0, 10).join(", ") + (paths.length > 10 ? `, and ${paths.length - 10} more` : "");

/**
 * Everything a restore needs, checked before anything moves: no move of the session running its tools, no drift
 * (files changed outside forkpoint since it last saw them), every content present and intact, no symbolic link or
 * file in the way of a path to write.
 * With `allowDrift`, drift is reported in `drifted` instead of refused (a forced move saves it first); everything
 * else is still checked, so a forced move that cannot be done is refused before it saves anything. `ownMove`: the
 * journaled move this restore is a step of (running, and no other move).
 */
export async function prepareRestore(
  ctx: EngineContext,
  ws: WorkspaceRow,
  manifestId: number,
  allowDrift = false,
  ownMove?: string,
): Promise<PreparedRestore> {
  assertNoRestorePending(ws);
  const state = await stateOf(ctx, ws);
  const { drifted, changes, contents, written } = await state.exclusive(async () => {
    await scan(ctx, state);
    return ctx.store.read((tx) => prepareRestoreUnit(tx, state, ws, manifestId, allowDrift, ownMove, packCacheOf(ctx.store)));
  });
  if (drifted.length > 0 && !allowDrift) {
    throw new ConflictError(
      `the workspace ${ws.dir} changed outside forkpoint since it last saw it (${shownPaths(drifted)}); take a checkpoint to keep those changes, then move`,
      "WORKSPACE_DRIFT",
    );
  }
  const blocked = assertRestorable(ws.dir, written);
  if (blocked) throw new ConflictError(`cannot restore the workspace ${ws.dir}: ${blocked}`, "WORKSPACE_DRIFT");
  return { ws, manifestId, changes: withoutForeign(ws.dir, changes), contents, drifted, ...(ownMove === undefined ? {} : { ownMove }) };
}

/**
 * `changes` less the files to add that are already there with the target's content. A file to add that is there
 * with another content is not forkpoint's (ignored now, e.g. by a .gitignore changed since the target was captured):
 * it is never overwritten, so the restore is refused.
 */
function withoutForeign(dir: string, changes: FileChange[]): FileChange[] {
  const foreign: string[] = [];
  const kept = changes.filter((c) => {
    if (c.from !== null || c.to === null) return true;
    const st = lstatSync(`${dir}/${c.path}`, { throwIfNoEntry: false });
    if (!st) return true;
    if (st.isFile() && sha256(readFileAt(dir, c.path)) === c.to) return false;
    foreign.push(c.path);
    return true;
  });
  if (foreign.length > 0) {
    throw new ConflictError(
      `cannot restore the workspace ${dir}: ${shownPaths(foreign)} would be overwritten, and forkpoint does not capture them now (ignored); move them away, then move`,
      "WORKSPACE_DRIFT",
    );
  }
  return kept;
}

function* prepareRestoreUnit(
  tx: Tx,
  state: WorkspaceState,
  ws: WorkspaceRow,
  manifestId: number,
  allowDrift: boolean,
  ownMove: string | undefined,
  packs: PackCache,
) {
  yield* assertNoMoveRunning(tx, ws, ownMove);
  // Its checkpoint was deleted and pruned since the move read it.
  if ((yield* tx.getManifest(manifestId)) === undefined) throw new NotFoundError("workspace snapshot", String(manifestId));
  const reader = new TreeReader();
  const known = yield* reader.rootOf(tx, ws.manifestId);
  const target = yield* reader.rootOf(tx, manifestId);
  const drifted = (yield* diffTrees(tx, reader, known, state.cache.root)).map((c) => c.path);
  const changes = yield* diffTrees(tx, reader, known, target);
  // The paths the restore will write: with drift to be saved first, from the directory as it is now.
  const fromDisk = allowDrift && drifted.length > 0 ? yield* diffTrees(tx, reader, state.cache.root, target) : changes;
  const written = [...new Set([...changes, ...fromDisk].map((c) => c.path))];
  const contents = yield* checkedContents(
    tx,
    changes.flatMap((c) => (c.to === null ? [] : [c.to])),
    packs,
  );
  return { drifted, changes, contents, written };
}

/** Reads and checks every content of `hashes`, keeping those that fit `KEEP_BYTES` (the rest are read again later). */
function* checkedContents(tx: Tx, hashes: string[], packs: PackCache): Step<Map<string, Buffer>> {
  const kept = new Map<string, Buffer>();
  let bytes = 0;
  const unique = [...new Set(hashes)];
  for (let i = 0; i < unique.length; i += 256) {
    for (const [hash, content] of yield* readBlobs(tx, unique.slice(i, i + 256), packs)) {
      if (bytes + content.length > KEEP_BYTES) continue;
      kept.set(hash, content);
      bytes += content.length;
    }
  }
  return kept;
}

export interface PreparedRestore {
  ws: WorkspaceRow;
  manifestId: number;
  /** The files that differ between what forkpoint last saw and the target (the directory holds the former). */
  changes: FileChange[];
  /** Contents to write, checked (all of them, or as many as fit in memory: the others are read again). */
  contents: Map<string, Buffer>;
  /** Paths changed outside forkpoint (added, modified or deleted): none unless `allowDrift` was given. */
  drifted: string[];
  /** The journaled move the restore is a step of (see `prepareRestore`). */
  ownMove?: string;
}

/** Contents to write: from memory, or read again (and checked) from the database. */
export function contentsFor(ctx: EngineContext, kept: ReadonlyMap<string, Buffer>): (hashes: string[]) => Promise<Map<string, Buffer>> {
  const cache = new Map(kept);
  const packs = packCacheOf(ctx.store);
  return async (hashes) => {
    const missing = hashes.filter((h) => !cache.has(h));
    if (missing.length > 0) for (const [h, c] of await ctx.store.read((tx) => readBlobs(tx, missing, packs))) cache.set(h, c);
    return cache;
  };
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
  const journal: RestoreJournal = {
    ...move,
    manifestId: p.manifestId,
    fromManifestId: p.ws.manifestId,
    pid: process.pid,
    pidStart: SELF_START,
    pids: [process.pid],
  };
  const state = await stateOf(ctx, p.ws);
  await ctx.store.write({ sessionId }, (tx) => startFilesRestoreUnit(tx, sessionId, p, journal));
  const moved = { any: false };
  let changed: { written: string[]; deleted: string[] };
  try {
    changed = await state.exclusive(async () => {
      const done = await restoreChanges(p.ws.dir, p.changes, contentsFor(ctx, p.contents), moved);
      const sc = scanContext(ctx, state, null);
      for (const c of p.changes) {
        if (c.to === null) deletedFile(state.cache, c.path);
        else wroteFile(state.cache, sc, c.path, c.to);
      }
      return done;
    });
  } catch (error) {
    // Failed before any file moved (staging): nothing to finish, so no journal. Otherwise recovery finishes it.
    if (!moved.any) await endRestore(ctx, sessionId);
    throw error;
  }
  const stats = state.cache.toRows();
  await ctx.store.write({ sessionId }, (tx) => endFilesRestoreUnit(tx, sessionId, journal, ctx, move, stats));
  state.cache.markStored(stats);
  return changed;
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
  if (move.scope === "files") yield* tx.setWorkspaceRestoring(sessionId, null);
}

function* startFilesRestoreUnit(tx: Tx, sessionId: string, p: PreparedRestore, journal: RestoreJournal) {
  // Another process (or handle) may have restored, re-attached or pruned since `prepareRestore` checked: the
  // journal is written only onto the workspace that was checked, and no other restore can start once it is.
  const now = yield* tx.getWorkspace(sessionId);
  if (now?.restoring) {
    throw new ConflictError(`the workspace ${p.ws.dir} is being restored by another move; try again when it ends`, "MOVE_IN_PROGRESS");
  }
  yield* assertNoMoveRunning(tx, p.ws, p.ownMove);
  if (!now || now.manifestId !== p.ws.manifestId || !sameFilesConfig(now, p.ws)) {
    throw new ConflictError(
      `the workspace ${p.ws.dir} changed (another process moved or re-attached it) since this move checked it; move again`,
      "WORKSPACE_DRIFT",
    );
  }
  // The target's snapshot, stored again if a prune took it since it was read (otherwise its id, unchanged).
  if ((yield* tx.getManifest(p.manifestId)) === undefined) journal.manifestId = yield* storeTarget(tx, p);
  yield* tx.setWorkspaceRestoring(sessionId, JSON.stringify(journal));
}

/** Stores the target again from what forkpoint last saw and the changes (a prune took it after it was prepared). */
function* storeTarget(tx: Tx, p: PreparedRestore): Step<number> {
  const reader = new TreeReader();
  const known = yield* reader.rootOf(tx, p.ws.manifestId);
  const applied = yield* applyChanges(tx, reader, known, new Map(p.changes.map((c) => [c.path, c.to])));
  const needed = [...new Set(p.changes.flatMap((c) => (c.to === null ? [] : [c.to])))];
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

/** Clears the restore journal: the move it belonged to is over (done, or refused with nothing moved). */
export async function endRestore(ctx: EngineContext, sessionId: string): Promise<void> {
  await ctx.store.write({ sessionId }, (tx) => tx.setWorkspaceRestoring(sessionId, null));
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
 * change these files, and a restore under them would overwrite what they do, or be taken for drift. `ownMove` (the
 * move the restore is a step of, which runs no tool meanwhile) does not count.
 */
export function* assertNoMoveRunning(tx: Tx, ws: WorkspaceRow, ownMove?: string): Step<void> {
  const running = (yield* tx.runningMoves(ws.sessionId)).filter((m) => m.id !== ownMove);
  if (running.length === 0) return;
  throw new ConflictError(
    `a move of this session is under way (${running.map((m) => `${m.id}, process ${m.pid}`).join("; ")}) and its tools change the workspace ${ws.dir}; ` +
      "try again when it ends, or call fp.recover() if its process died",
    "MOVE_IN_PROGRESS",
  );
}

/** The workspace as it was before forkpoint's own doing (a tool call, a move): what changes from now on is tracked. */
export interface FilesBefore {
  state: WorkspaceState;
  tracker: Map<string, string | null>;
}

/** The workspace's files before forkpoint's own doing (a tool call, a move), or null without a workspace. */
export async function filesBefore(ctx: EngineContext, ws: WorkspaceRow | undefined): Promise<FilesBefore | null> {
  // Another host's directory: nothing of it is read here, and what a tool changes there stays drift.
  if (!ws || !isLocal(ws)) return null;
  try {
    const state = await stateOf(ctx, ws);
    return await state.exclusive(async () => {
      await scan(ctx, state);
      const tracker = new Map<string, string | null>();
      state.cache.trackers.add(tracker);
      return { state, tracker };
    });
  } catch {
    return null; // unreadable now: what follows is then not absorbed, and shows as drift
  }
}

/**
 * After forkpoint's own doing: the paths that changed since `before` become known (not drift). Changes made by hand
 * earlier stay drift. Never throws: a scan that fails leaves the changes as drift.
 */
export async function absorbChanges(ctx: EngineContext, sessionId: string, before: FilesBefore | null): Promise<void> {
  if (!before) return;
  const { state, tracker } = before;
  try {
    const ws = await ctx.store.read((tx) => tx.getWorkspace(sessionId));
    if (!ws || !sameFilesConfig(ws, state.config)) return;
    const touched = await state.exclusive(async () => {
      await scan(ctx, state, new PackWriter());
      state.cache.trackers.delete(tracker);
      const out = new Map<string, string | null>();
      for (const [path, was] of tracker) {
        const now = state.cache.fileHash(path);
        if (now !== was) out.set(path, now);
      }
      // Contents a scan read before without storing them: stored now (those that changed again stay drift).
      const needed = [...new Set([...out.values()].filter((h): h is string => h !== null))];
      const present = new Set(await ctx.store.read((tx) => tx.presentBlobs(needed)));
      const writer = new PackWriter();
      for (const [path, hash] of out) {
        if (hash === null || present.has(hash)) continue;
        const content = readIfStill(state.config.dir, path, hash);
        if (content) writer.add(hash, content);
        else out.delete(path);
      }
      await writer.persist(ctx.store, sessionId);
      return out;
    });
    if (touched.size === 0) return;
    const stats = state.cache.toRows();
    await ctx.store.write({ sessionId }, (tx) => absorbChangesUnit(tx, sessionId, touched, ctx, stats));
    state.cache.markStored(stats);
  } catch (error) {
    // The tool call or move itself succeeded; its file changes then count as drift until the next checkpoint.
    ctx.logger.warn(`forkpoint: scanning the workspace of session ${sessionId} after a tool ran failed; its changes count as drift`, error);
  } finally {
    state.cache.trackers.delete(tracker);
  }
}

function* absorbChangesUnit(tx: Tx, sessionId: string, touched: Map<string, string | null>, ctx: EngineContext, stats: StatRows) {
  const current = (yield* tx.getWorkspace(sessionId))!;
  const reader = new TreeReader();
  const known = yield* reader.rootOf(tx, current.manifestId);
  // A content a prune took meanwhile: that change stays drift.
  const present = new Set(yield* tx.presentBlobs([...touched.values()].filter((h): h is string => h !== null)));
  for (const [path, hash] of touched) if (hash !== null && !present.has(hash)) touched.delete(path);
  const applied = yield* applyChanges(tx, reader, known, touched);
  yield* tx.insertTrees([...[...reader.ephemeralBodies].map(([hash, body]) => ({ hash, body })), ...applied.trees]);
  yield* tx.setWorkspaceManifest(sessionId, yield* tx.putManifest(applied.root, "{}", applied.root), ctx.now());
  yield* tx.putWorkspaceStats(sessionId, stats.rows, stats.deleted);
}

/** Memo of `verify`: problems found per tree (relative paths under it) and per content, by hash. */
export interface FilesSeen {
  trees: Map<string, string[] | null>;
  contents: Map<string, boolean>;
}

/**
 * Problems with the files a checkpoint captured (for `verify`): every tree and every content against their hashes.
 * With `seen`, what an earlier checkpoint's check found is not checked again (snapshots share most of their trees).
 */
export function* checkpointFilesProblems(tx: Tx, checkpointId: string, seen?: FilesSeen): Step<string[]> {
  const files = yield* tx.checkpointManifest(checkpointId);
  if (!files) return [];
  const memo = seen ?? { trees: new Map(), contents: new Map() };
  const reader = new TreeReader(true);
  let root: string;
  try {
    root = yield* reader.rootOf(tx, files.manifestId);
  } catch {
    return ["its file manifest is missing or does not match its hash"];
  }
  const problems = yield* treeProblems(tx, reader, root, memo);
  if (problems === null) return ["its file manifest is missing or does not match its hash"];
  return problems.map((path) => `its file ${path} is missing or does not match its hash`);
}

/** The files under tree `hash` whose content is missing or damaged (null: a tree is). */
function* treeProblems(tx: Tx, reader: TreeReader, hash: string, memo: FilesSeen): Step<string[] | null> {
  const known = memo.trees.get(hash);
  if (known !== undefined) return known;
  let entries;
  try {
    yield* reader.load(tx, [hash]);
    entries = reader.entries(hash);
  } catch {
    memo.trees.set(hash, null);
    return null;
  }
  const out: string[] = [];
  const files: [string, string][] = [];
  for (const [key, h] of entries) {
    if (key.endsWith("/")) {
      const below = yield* treeProblems(tx, reader, h, memo);
      if (below === null) {
        memo.trees.set(hash, null);
        return null;
      }
      out.push(...below.map((p) => `${key}${p}`));
    } else files.push([key, h]);
  }
  const unchecked = [...new Set(files.map(([, h]) => h).filter((h) => !memo.contents.has(h)))];
  for (let i = 0; i < unchecked.length; i += 256) {
    const chunk = unchecked.slice(i, i + 256);
    try {
      yield* readBlobs(tx, chunk);
      for (const h of chunk) memo.contents.set(h, true);
    } catch {
      for (const h of chunk) {
        try {
          yield* readBlobs(tx, [h]);
          memo.contents.set(h, true);
        } catch {
          memo.contents.set(h, false);
        }
      }
    }
  }
  for (const [name, h] of files) if (!memo.contents.get(h)) out.push(name);
  const sorted = out.sort();
  memo.trees.set(hash, sorted);
  return sorted;
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
