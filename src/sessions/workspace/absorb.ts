// Forkpoint's own doing is not drift: the files a tool call or a move's undo and replay changed (tracked from before to
// after) become what forkpoint last saw; a hand edit made before them stays drift.
import type { CallRecord, Step, Tx, WorkspaceRow } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { keepMovedHandEdits } from "./moved-hand-edits.js";
import { readIfStill } from "./capture.js";
import { capturedPaths } from "./captured.js";
import { contentOf } from "./file-id.js";
import { isLocal } from "./host.js";
import { reaches } from "./named-paths.js";
import { TreeReader, applyChanges, filesAt } from "./trees.js";
import { PackWriter } from "./packs.js";
import { sameFilesConfig } from "./snapshots.js";
import type { StatRows } from "./stat-cache.js";
import { scan, stateOf, type WorkspaceState } from "./state.js";

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

/** What a scan after forkpoint's own doing found: every path that changed, and those whose contents are to be stored. */
export interface ScannedChanges {
  sessionId: string;
  before: FilesBefore;
  /** Every path that changed, those that stay drift included: a call's effect may be in any of them. */
  changed: string[];
  /** The paths to make known, with their new file ids (null: deleted); empty when nothing is to be written but paths. */
  touched: Map<string, string | null>;
  /** What those paths held when forkpoint's doing began (null: nothing): one forkpoint did not know then stays drift. */
  was: ReadonlyMap<string, string | null>;
  /** The stat rows written with them where a call's completion did (see `landInCompletion`). */
  stats?: StatRows;
  /**
   * The paths whose drift when forkpoint's doing began may be forkpoint's own ("all": any): those a move's step that a
   * crash interrupted may have changed. They are made known as the rest; other drifted paths stay drift.
   */
  ownDrift?: ReadonlySet<string> | "all";
  /**
   * A call's run that changed no file: the files at the paths its arguments name (see `namedPaths`), as it found them.
   * Recorded as its `outputs`: a file there then is no file made by hand since it ran (see created-since.ts).
   */
  named?: Map<string, string | null>;
  /** The paths written again with the content they held as forkpoint's doing began (their file ids; null: none). */
  rewritten?: ReadonlyMap<string, string | null>;
  /** The paths changed outside `only` that stay drift (a save by hand meanwhile): someone else's, not `unseen`. */
  drifted?: string[];
}

/**
 * After forkpoint's own doing: the paths that changed since `before` become known (not drift). Changes made by hand
 * earlier stay drift. With `callId` (an `invoke`'s own run), the paths that changed are recorded as that call's, none
 * included: a move then knows which files the call's effect is in. Never throws: a scan that fails leaves the changes
 * as drift, and the call without a record (moves infer its paths from the snapshots around it). `unseen`: paths taken
 * out of `only`, whose change is someone else's (an undo putting back a hand edit its call's run found there).
 * Returns the paths changed outside `only` (and `unseen`) that stay drift: someone else's changes meanwhile.
 */
export async function absorbChanges(
  ctx: EngineContext,
  sessionId: string,
  before: FilesBefore | null,
  callId?: string,
  only?: ReadonlySet<string>,
  ownDrift?: ReadonlySet<string> | "all",
  unseen?: ReadonlySet<string>,
): Promise<string[]> {
  const scanned = await scanChanges(ctx, sessionId, before, only, unseen);
  if (scanned && ownDrift) scanned.ownDrift = ownDrift;
  await landChanges(ctx, scanned, callId);
  return scanned?.drifted ?? [];
}

/**
 * The first half of `absorbChanges`: the scan, and the new contents stored. Null without a workspace or when the scan
 * fails (logged; the changes stay drift). `landChanges` must follow, whatever happens between.
 */
export async function scanChanges(
  ctx: EngineContext,
  sessionId: string,
  before: FilesBefore | null,
  only?: ReadonlySet<string>,
  unseen?: ReadonlySet<string>,
): Promise<ScannedChanges | null> {
  if (!before) return null;
  const { state, tracker } = before;
  try {
    const ws = await ctx.store.read((tx) => tx.getWorkspace(sessionId));
    if (!ws || !sameFilesConfig(ws, state.config)) {
      state.cache.trackers.delete(tracker);
      return null;
    }
    let changed: string[] = [];
    const was = new Map<string, string | null>();
    const rewritten = new Map<string, string | null>();
    const drifted: string[] = [];
    const touched = await state.exclusive(async () => {
      await scan(ctx, state, new PackWriter());
      state.cache.trackers.delete(tracker);
      const out = new Map<string, string | null>();
      const outside = new Map<string, string>();
      for (const [path, was] of tracker) {
        const now = state.cache.fileId(path);
        // Written again with the same content: a call's path (it wrote there) with nothing to make known.
        if (now === was) {
          rewritten.set(path, now);
          continue;
        }
        // Under a path forkpoint's doing changed too: a file made a folder (or the reverse) takes what is under it along.
        const own = !only || reaches(only, path);
        if (own && !unseen?.has(path)) out.set(path, now);
        else if (now !== null) outside.set(path, now);
        if (!own && !unseen?.has(path)) drifted.push(path);
      }
      // Outside `only` (the paths forkpoint's doing may have changed), a change is someone else's: it stays drift,
      // unless a checkpoint holds that content there (an undo writing back what its call's run found unchanged).
      if (outside.size > 0)
        for (const path of await ctx.store.read((tx) => capturedPaths(tx, sessionId, outside))) out.set(path, outside.get(path)!);
      for (const path of out.keys()) if (drifted.includes(path)) drifted.splice(drifted.indexOf(path), 1);
      changed = [...out.keys(), ...rewritten.keys()];
      // Contents a scan read before without storing them: stored now (those that changed again stay drift).
      const needed = [...new Set([...out.values()].flatMap((id) => (id === null ? [] : [contentOf(id)])))];
      const present = new Set(await ctx.store.read((tx) => tx.presentBlobs(needed)));
      const writer = new PackWriter();
      for (const [path, id] of out) {
        if (id === null || present.has(contentOf(id))) continue;
        const hash = contentOf(id);
        const content = readIfStill(state.config.dir, path, hash);
        if (content) writer.add(hash, content);
        else out.delete(path);
      }
      await writer.persist(ctx.store, sessionId);
      for (const path of out.keys()) was.set(path, tracker.get(path) ?? null);
      return out;
    });
    return { sessionId, before, changed, touched, was, rewritten, drifted };
  } catch (error) {
    state.cache.trackers.delete(tracker);
    warnScan(ctx, sessionId, error);
    return null;
  }
}

/**
 * In the unit that completes call `callId`: what its run changed made known there, and recorded as its paths. Another
 * handle's, process's or server's move then never finds the call ended and its files not yet known (drift). True when
 * landed: `landChanges` is then told so.
 */
export function* landInCompletion(tx: Tx, ctx: EngineContext, scanned: ScannedChanges | null, callId: string): Step<boolean> {
  if (!scanned) return false;
  if (scanned.touched.size === 0) {
    yield* recordNoChangeUnit(tx, scanned, callId);
    return true;
  }
  // The same rows on a retry of the unit: the ones `landChanges` marks stored once it committed.
  scanned.stats ??= scanned.before.state.cache.toRows();
  yield* absorbChangesUnit(
    tx,
    scanned.sessionId,
    scanned.before.state.config.dir,
    new Map(scanned.touched),
    scanned.was,
    ctx,
    scanned.stats,
    callId,
    scanned.changed,
  );
  return true;
}

/**
 * The second half of `absorbChanges`: the changes made known, and the call's paths recorded, unless `landed` (by
 * `landInCompletion`, in a unit that committed). Never throws.
 */
export async function landChanges(ctx: EngineContext, scanned: ScannedChanges | null, callId?: string, landed = false): Promise<void> {
  if (!scanned) return;
  const { sessionId, touched, changed, was } = scanned;
  const { state } = scanned.before;
  if (landed) {
    if (scanned.stats) state.cache.markStored(scanned.stats);
    return;
  }
  try {
    if (touched.size === 0) {
      if (callId !== undefined) await ctx.store.write({ sessionId }, (tx) => recordNoChangeUnit(tx, scanned, callId));
      return;
    }
    const stats = state.cache.toRows();
    await ctx.store.write({ sessionId }, (tx) =>
      absorbChangesUnit(
        tx,
        sessionId,
        state.config.dir,
        new Map(touched),
        was,
        ctx,
        stats,
        callId,
        changed,
        scanned.ownDrift,
        scanned.rewritten,
      ),
    );
    state.cache.markStored(stats);
  } catch (error) {
    warnScan(ctx, sessionId, error);
  }
}

// The tool call or move itself succeeded; its file changes then count as drift until the next checkpoint.
const warnScan = (ctx: EngineContext, sessionId: string, error: unknown) =>
  ctx.logger.warn(`forkpoint: scanning the workspace of session ${sessionId} after a tool ran failed; its changes count as drift`, error);

/** Makes the changed files known, and records them as call `callId`'s when given (an `invoke`'s own run). */
function* absorbChangesUnit(
  tx: Tx,
  sessionId: string,
  dir: string,
  touched: Map<string, string | null>,
  was: ReadonlyMap<string, string | null>,
  ctx: EngineContext,
  stats: StatRows,
  callId: string | undefined,
  changed: readonly string[],
  ownDrift?: ReadonlySet<string> | "all",
  rewritten?: ReadonlyMap<string, string | null>,
) {
  const current = (yield* tx.getWorkspace(sessionId))!;
  const reader = new TreeReader();
  const known = yield* reader.rootOf(tx, current.manifestId);
  // A path that had drifted when a tool call or a move's step began (a hand edit no checkpoint holds) stays drift: made
  // known, the hand edit would pass for forkpoint's, and a later files move would write over it unsaved. (A files move
  // refuses drift before it starts; a "conversation" move does not, and its undos and replays may change such a file.)
  // A path a move's step interrupted by a crash may have changed is the move's own: its resumed steps make it known (so
  // is one changed by hand into just what the move's restore makes it: nothing there is lost).
  const drifted = [...touched.keys()].filter((path) => ownDrift !== "all" && !ownDrift?.has(path));
  const knownIds = yield* filesAt(tx, reader, known, drifted);
  const handEdited = drifted.filter((path) => (knownIds.get(path) ?? null) !== (was.get(path) ?? null));
  // What the run found and left there: a move tells the call's own output from a save made after it (conversation-drift.ts).
  const handEditIds = new Map(handEdited.map((path) => [path, { found: was.get(path) ?? null, left: touched.get(path) ?? null }]));
  for (const path of handEdited) touched.delete(path);
  keepMovedHandEdits(touched, handEditIds, was);
  yield* restoreTakenContents(tx, dir, touched);
  const applied = yield* applyChanges(tx, reader, known, touched);
  yield* tx.insertTrees([...[...reader.ephemeralBodies].map(([hash, body]) => ({ hash, body })), ...applied.trees]);
  yield* tx.setWorkspaceManifest(sessionId, yield* tx.putManifest(applied.root, "{}", applied.root), ctx.now());
  yield* tx.putWorkspaceStats(sessionId, stats.rows, stats.deleted);
  // What the run left there, as made known now (drift left out): a move takes a call both its sides share from this.
  // A call's undo puts a hand edit it found back: recorded, so a move undoing it leaves that as drift (own-changes.ts).
  if (callId === undefined) return;
  // A hand edit the run found and wrote again with the same content: found there as any other (see `rewrittenHandEdits`).
  const same = yield* handEditsAmong(tx, reader, known, rewritten);
  for (const [path, ids] of same) handEditIds.set(path, ids);
  yield* recordPathsUnit(tx, sessionId, callId, changed, { handEdited: [...handEdited, ...same.keys()], handEditIds, outputs: touched });
}

/** Records the paths of a call whose run made nothing known (`scanned.touched` empty), with what it found there. */
function* recordNoChangeUnit(tx: Tx, scanned: ScannedChanges, callId: string): Step<void> {
  const record = { ...namedRecord(scanned), ...(yield* rewrittenHandEdits(tx, scanned)) };
  yield* recordPathsUnit(tx, scanned.sessionId, callId, scanned.changed, record);
}

/**
 * The paths a call's run wrote again with just what they held as it began (`rewritten`) where that was a hand edit
 * forkpoint never made known (a file saved by hand to what the call then writes): recorded as any hand edit the run
 * found (found and left the same), so that a move tells it from a save made after the call, and its undo puts it back.
 */
function* rewrittenHandEdits(tx: Tx, scanned: ScannedChanges): Step<CallRecord> {
  if (!scanned.rewritten || scanned.rewritten.size === 0) return {};
  const current = yield* tx.getWorkspace(scanned.sessionId);
  if (!current) return {};
  const reader = new TreeReader();
  const same = yield* handEditsAmong(tx, reader, yield* reader.rootOf(tx, current.manifestId), scanned.rewritten);
  return same.size === 0 ? {} : { handEdited: [...same.keys()], handEditIds: same };
}

/** Those of `rewritten` (path, file id) whose id is not what forkpoint knows there: hand edits, found and left as they were. */
function* handEditsAmong(
  tx: Tx,
  reader: TreeReader,
  known: string,
  rewritten: ReadonlyMap<string, string | null> | undefined,
): Step<Map<string, { found: string | null; left: string | null }>> {
  const out = new Map<string, { found: string | null; left: string | null }>();
  if (!rewritten || rewritten.size === 0) return out;
  const knownIds = yield* filesAt(tx, reader, known, rewritten.keys());
  for (const [path, id] of rewritten) if ((knownIds.get(path) ?? null) !== id) out.set(path, { found: id, left: id });
  return out;
}

/** What a run that changed no file records: the files where its arguments name, as `outputs` (see `ScannedChanges`). */
const namedRecord = (scanned: ScannedChanges): CallRecord => (scanned.named ? { outputs: scanned.named } : {});

/** Contents read again are stored once they reach this much (memory stays bounded whatever the files' size). */
const FLUSH_BYTES = 2 << 20;

/**
 * Contents stored before the unit and not referenced yet are what a prune (another process's, another server's) deletes
 * between the scan and this unit: stored again from the files where they still hold them, since the prune cannot run
 * during the unit. A file that changed again meanwhile is left out: that change stays drift.
 */
function* restoreTakenContents(tx: Tx, dir: string, touched: Map<string, string | null>): Step<void> {
  const present = new Set(yield* tx.presentBlobs([...touched.values()].flatMap((id) => (id === null ? [] : [contentOf(id)]))));
  const writer = new PackWriter();
  for (const [path, id] of touched) {
    if (id === null || present.has(contentOf(id))) continue;
    const content = readIfStill(dir, path, contentOf(id));
    if (content) writer.add(contentOf(id), content);
    else touched.delete(path);
    if (writer.pendingBytes >= FLUSH_BYTES) yield* writer.flush(tx);
  }
  yield* writer.flush(tx);
}

/**
 * Records the paths call `callId` changed while it ran, what it left in those made known (`outputs`) and which of
 * them held a hand edit as it began (`handEdited`, with what it found and left there), unless its session was deleted
 * meanwhile.
 */
function* recordPathsUnit(tx: Tx, sessionId: string, callId: string, paths: readonly string[], recorded: CallRecord = {}) {
  if ((yield* tx.getSession(sessionId)) === undefined) return;
  yield* tx.putCallPaths(callId, sessionId, paths, recorded);
}
