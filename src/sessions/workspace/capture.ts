// Capturing the workspace's files into a snapshot: read through the stat cache outside any transaction and stored with
// a checkpoint (or an attach) in its own, or read inside the transaction of a move that writes a checkpoint (an edit's).
import { readFileSync } from "node:fs";
import { ConflictError } from "../../models/errors.js";
import type { SkippedFile } from "../../models/types.js";
import type { Step, Tx, TreeRow, WorkspaceRow } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { sha256 } from "../integrity/hashes.js";
import { EMPTY_TREE, EMPTY_TREE_BODY, isDir, treeBody, treeHash, type DirNode } from "./dir-node.js";
import { contentOf } from "./file-id.js";
import { assertLocal } from "./host.js";
import { TreeReader, diffTrees } from "./trees.js";
import { PackWriter } from "./packs.js";
import { type FilesConfig } from "./snapshots.js";
import type { StatRows } from "./stat-cache.js";
import { scan, scanContext, stateIn, stateOf, type WorkspaceConfig, type WorkspaceState } from "./state.js";
import { snapshotCalls } from "./unapplied.js";
import { walkTree } from "./walk.js";

/**
 * A snapshot of the directory ready to be stored: its root tree, the trees and contents it adds to the snapshot it
 * was compared with (`base`, the workspace's manifest then), and the stat cache's changed rows.
 */
export interface Capture extends FilesConfig {
  sessionId: string;
  /** The workspace's manifest the capture was compared with (null: none, when attaching). */
  base: number | null;
  /**
   * When the workspace row was last written, read before the scan (null when attaching): the capture is stored only
   * while it is still so. A restore by another process that ran during the scan (even one back to the same manifest)
   * makes the scan a mix of two versions, and it is taken again.
   */
  since: number | null;
  root: string;
  trees: TreeRow[];
  /** Content hashes the snapshot has and `base` has not: each must be stored. */
  contents: string[];
  stats: StatRows;
  files: number;
  /** What the directory holds that cannot be stored, left out (see `StatCache.skip`). */
  skipped: SkippedFile[];
}

/**
 * The directories of the cache not in the snapshot `base` and the contents it adds (compared a level at a time); with
 * no base (or one stored before trees, which has no tree to share), every directory and content.
 */
function* captureOf(
  tx: Tx,
  state: WorkspaceState,
  config: FilesConfig & { sessionId: string; updatedAt?: number },
  base: number | null,
): Step<Capture> {
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
    contents = [...new Set(changes.flatMap((c) => (c.from === null ? [] : [contentOf(c.from)])))];
  }
  return {
    sessionId: config.sessionId,
    dir: config.dir,
    exclude: config.exclude,
    gitignore: config.gitignore,
    base,
    since: base === null ? null : (config.updatedAt ?? null),
    root,
    trees,
    contents,
    stats: state.cache.toRows(),
    files: state.cache.count(),
    skipped: state.cache.skippedFiles(),
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
  ws: WorkspaceConfig & { manifestId: number | null; updatedAt?: number },
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

function* takeCaptureUnit(tx: Tx, state: WorkspaceState, ws: WorkspaceConfig & { manifestId: number | null; updatedAt?: number }) {
  const current = ws.manifestId === null ? null : ((yield* tx.getWorkspace(ws.sessionId))?.manifestId ?? null);
  const capture = yield* captureOf(tx, state, ws, current);
  const present = yield* storedOf(tx, capture.contents);
  const missing = filesWith(state, new Set(capture.contents.filter((h) => !present.has(h))));
  return { capture, missing };
}

/** The file's content if it still has hash `hash`. */
export function readIfStill(root: string, path: string, hash: string): Buffer | null {
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
  if (capture.since !== null && ws?.updatedAt !== capture.since) return false;
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

/**
 * Refuses, before a move starts, a checkpoint it would write for a session whose workspace is another host's (as
 * `checkpoint()` refuses): its files cannot be read here.
 */
export function* assertCapturable(tx: Tx, session: { id: string; hasWorkspace: boolean }, what: string): Step<void> {
  if (!session.hasWorkspace) return;
  const ws = yield* tx.getWorkspace(session.id);
  if (ws) assertLocal(ws, what);
}

/**
 * Stores the workspace's files (when the session has one) as checkpoint `checkpointId`'s, and as what forkpoint last
 * saw there, as `checkpoint()` does. They are read inside the transaction, not before it, because only then are they
 * the files the move left: after its restore (scope "both") and its tools' undo and replay. The lineage's calls not
 * applied then (or of unknown outcome) are recorded with them (see `snapshotCalls`).
 */
export function* captureFiles(ctx: EngineContext, tx: Tx, sessionId: string, checkpointId: string, what: string): Step<void> {
  const ws = yield* tx.getWorkspace(sessionId);
  if (!ws) return;
  assertLocal(ws, what);
  const manifestId = yield* captureNow(ctx, tx, yield* stateIn(ctx, tx, ws), ws);
  const checkpoint = (yield* tx.getCheckpoint(checkpointId))!;
  const session = (yield* tx.getSession(sessionId))!;
  const calls = yield* snapshotCalls(tx, session, checkpoint.branchId, checkpoint.position);
  yield* tx.insertCheckpointFiles({ checkpointId, manifestId, dir: ws.dir, exclude: ws.exclude, gitignore: ws.gitignore, ...calls });
  yield* tx.setWorkspaceManifest(sessionId, manifestId, ctx.now());
}
