// Preparing a restore: everything it needs, checked before any file moves (no drift, every content present and
// intact, nothing in the way of a path to write), and the contents it writes, kept in memory as far as they fit.
import { shownNames } from "../../models/unsafe-text.js";
import { lstatSync, readFileSync } from "node:fs";
import { ConflictError, NotFoundError } from "../../models/errors.js";
import type { Step, Tx, WorkspaceRow } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { sha256 } from "../integrity/hashes.js";
import { contentOf, executableMode, isExecutable } from "./file-id.js";
import { assertRestorable } from "./files.js";
import { TreeReader, diffTrees, type FileChange } from "./trees.js";
import { packCacheOf, readBlobs, type PackCache } from "./packs.js";
import { assertNoMoveRunning, assertNoRestorePending } from "./restore-guards.js";
import { movedMeanwhile } from "../moves/files-planned.js";
import { callMayRun } from "../core/ownership.js";
import { scan, stateOf, type WorkspaceState } from "./state.js";
import { ignoredByTarget } from "./target-rules.js";

/** The lstat of `full`, or null when nothing is there (or a file is on the way: nothing can be below it). */
function lstatOrNull(full: string) {
  try {
    return lstatSync(full, { throwIfNoEntry: false }) ?? null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOTDIR") return null;
    throw error;
  }
}

/** The SHA-256 of the file at `path`, or null when it cannot be read (a file forkpoint may not read is not its own). */
function hashOrNull(root: string, path: string): string | null {
  try {
    return sha256(readFileSync(`${root}/${path}`));
  } catch {
    return null;
  }
}

/** Contents a prepared restore keeps in memory; past this, they are checked, dropped, and read again to be written. */
const KEEP_BYTES = 64 << 20;

/**
 * Everything a restore needs, checked before anything moves: no move of the session running its tools, no drift
 * (files changed outside forkpoint since it last saw them), every content present and intact, no symbolic link or
 * file in the way of a path to write.
 * With `allowDrift`, drift is reported in `drifted` instead of refused (a forced move saves it first); everything
 * else is still checked, so a forced move that cannot be done is refused before it saves anything. `ownMove`: the
 * journaled move this restore is a step of (running, and no other move). `hold`: paths left as they are, drift or
 * not, neither refused nor written (hand edits a stopped move's undos put back, see `heldPutBacks`); those the restore
 * would have changed are in `held`.
 */
export async function prepareRestore(
  ctx: EngineContext,
  ws: WorkspaceRow,
  manifestId: number,
  allowDrift: boolean | "leave" = false,
  ownMove?: string,
  leaveAlone: readonly string[] = [],
  hold: readonly string[] = [],
): Promise<PreparedRestore> {
  assertNoRestorePending(ws);
  const state = await stateOf(ctx, ws);
  const leave = allowDrift === "leave";
  const { drifted, changes, contents, applied, leftAlone, held, settled } = await state.exclusive(async () => {
    await scan(ctx, state);
    return ctx.store.read((tx) =>
      prepareRestoreUnit(ctx, tx, state, ws, manifestId, ownMove, packCacheOf(ctx.store), leaveAlone, leave, hold),
    );
  });
  // Checked before drift is refused: a refusal that forcing would not get past says what is in the way instead.
  const blocked = assertRestorable(ws.dir, applied);
  const foreign = blocked ? [] : foreignPaths(ws.dir, applied);
  // The directory is looked at again here, after the scan: what is in the way may be another call's or move's doing.
  if (blocked || foreign.length > 0) await ctx.store.read((tx) => refuseOthersDoing(ctx, tx, ws, ownMove === undefined));
  if (blocked) throw new ConflictError(`cannot restore the workspace ${ws.dir}: ${blocked}`, "WORKSPACE_DRIFT");
  if (drifted.length > 0 && !allowDrift) {
    const unknown = await ctx.store.read((tx) => interruptedCalls(tx, ws.sessionId));
    throw new ConflictError(
      `the workspace ${ws.dir} changed outside forkpoint since it last saw it (${shownNames(drifted)}); ` +
        (unknown.length === 0
          ? "take a checkpoint to keep those changes, then move"
          : `a crash interrupted the undo or replay of ${unknown.join(", ")} (reported unknown), which may have made them: ` +
            "first record what became of it with resolveToolCall (succeeded: it finished; failed: it changed nothing), " +
            "then take a checkpoint to keep those changes (or move with force: true), then move"),
      "WORKSPACE_DRIFT",
    );
  }
  return {
    ws,
    manifestId,
    changes: withoutForeign(ws.dir, changes, foreign),
    contents,
    drifted,
    leftAlone: [...leftAlone],
    ...(held.length > 0 ? { held } : {}),
    ...(settled.length > 0 ? { settled } : {}),
    ...(ownMove === undefined ? {} : { ownMove }),
  };
}

/** The calls of the session whose undo or replay a crash interrupted (`tool id`): their effect on the files is unknown. */
function* interruptedCalls(tx: Tx, sessionId: string): Step<string[]> {
  const out: string[] = [];
  for (const id of yield* tx.uncertainInvocations(sessionId)) out.push(`${(yield* tx.getTool(id))?.tool ?? "?"} ${id}`);
  return out;
}

/**
 * `changes` less the files to add that are already there with the target's content. A file to add that is there
 * with another content is not forkpoint's (ignored now, e.g. by a .gitignore changed since the target was captured):
 * it is never overwritten, so the restore is refused (`foreign`: those files, see `foreignPaths`, asked of the changes
 * from the directory as it is now: a file forkpoint captures where it saw none, a folder made a file by hand, is drift,
 * saved first when forced).
 */
function withoutForeign(dir: string, changes: FileChange[], foreign: readonly string[]): FileChange[] {
  if (foreign.length > 0) throw new ConflictError(`cannot restore the workspace ${dir}: ${foreignText(foreign)}`, "WORKSPACE_DRIFT");
  return changes.filter((c) => !(c.from === null && c.to !== null && lstatOrNull(`${dir}/${c.path}`)?.isFile()));
}

/**
 * The files to add (`from` null) that are there already with another content or mode: not forkpoint's (ignored now,
 * or too large or unreadable to store), never overwritten. One there with the target's content and mode is not.
 */
function foreignPaths(dir: string, changes: readonly FileChange[]): string[] {
  return changes.flatMap((c) => {
    if (c.from !== null || c.to === null) return [];
    const st = lstatOrNull(`${dir}/${c.path}`);
    // A directory where the file goes holds only files the restore deletes (`assertRestorable` checked it).
    if (!st || st.isDirectory()) return [];
    const same = st.isFile() && executableMode(st.mode) === isExecutable(c.to) && hashOrNull(dir, c.path) === contentOf(c.to);
    return same ? [] : [c.path];
  });
}

const foreignText = (foreign: readonly string[]) =>
  `${shownNames(foreign)} would be overwritten, and forkpoint does not capture ${foreign.length === 1 ? "it" : "them"} now ` +
  `(ignored, or not a file it can store); move ${foreign.length === 1 ? "it" : "them"} away, then move`;

function* prepareRestoreUnit(
  ctx: EngineContext,
  tx: Tx,
  state: WorkspaceState,
  ws: WorkspaceRow,
  manifestId: number,
  ownMove: string | undefined,
  packs: PackCache,
  leaveAlone: readonly string[],
  leaveDrift: boolean,
  hold: readonly string[],
) {
  yield* assertNoMoveRunning(tx, ws, ownMove);
  const found = heldOut(yield* restoreChanges(tx, state, ws, manifestId, packs), hold);
  const { drifted, leftAlone, held, settled } = found;
  if (drifted.length > 0) yield* refuseOthersDoing(ctx, tx, ws, ownMove === undefined);
  // A forced move's second look, after its drift was saved: what the first look left alone stays so (see force.ts).
  let changes = leaveAlone.length === 0 ? found.changes : found.changes.filter((c) => c.to !== null || !leaveAlone.includes(c.path));
  let applied = found.applied;
  // Drift left as it is: the rest of the files, as forkpoint last saw them, get the target's.
  if (leaveDrift && drifted.length > 0) {
    const drift = new Set(drifted);
    changes = changes.filter((c) => !drift.has(c.path));
    applied = changes;
  }
  const contents = yield* checkedContents(
    tx,
    changes.flatMap((c) => (c.to === null ? [] : [contentOf(c.to)])),
    packs,
  );
  return { drifted, changes, contents, applied, leftAlone, held, settled };
}

/** `found` less the paths of `hold` (left as they are), with those it would have changed or found drifted (`held`). */
function heldOut<T extends { drifted: string[]; changes: FileChange[]; applied: FileChange[] }>(found: T, hold: readonly string[]) {
  if (hold.length === 0) return { ...found, held: [] as string[] };
  const keep = new Set(hold);
  const touched = [...found.drifted, ...found.changes.map((c) => c.path), ...found.applied.map((c) => c.path)];
  return {
    ...found,
    drifted: found.drifted.filter((p) => !keep.has(p)),
    changes: found.changes.filter((c) => !keep.has(c.path)),
    applied: found.applied.filter((c) => !keep.has(c.path)),
    held: [...new Set(touched.filter((p) => keep.has(p)))].sort(),
  };
}

/**
 * Drift found against workspace row `ws` that forkpoint's own doing elsewhere may explain is refused as that, not as
 * drift: another handle's, process's or server's move or call that made its changes known since `ws` was read (the
 * move is planned again on them, see `movedMeanwhile`), or a call running (`CALL_IN_PROGRESS`), its changes not yet
 * known. Run after the scan that found the drift: what forkpoint made known before it is in the row read here. `replan`:
 * false for a journaled move's own restore (see `movedMeanwhile`).
 */
function* refuseOthersDoing(ctx: EngineContext, tx: Tx, ws: WorkspaceRow, replan: boolean): Step<void> {
  const now = yield* tx.getWorkspace(ws.sessionId);
  if (now && (now.manifestId !== ws.manifestId || now.restoring !== ws.restoring))
    throw movedMeanwhile(ws.sessionId, `forkpoint changed the files of its workspace ${ws.dir} since`, replan);
  // This thread's own call is counted too when it is no longer in flight: its completion (which makes its changes
  // known) may have committed after this read began.
  const self = ctx.ownership.self;
  const live = (yield* tx.callOwners(ws.sessionId)).filter(
    (c) => callMayRun(ctx.ownership, c) || (c.pid === self.pid && c.pidStart === self.pidStart),
  );
  if (live.length === 0) return;
  throw new ConflictError(
    `a tool call of this session is running or has just ended (${live.map((c) => `${JSON.stringify(c.tool)} ${c.entryId}`).join("; ")}), ` +
      `and what it changed in the workspace ${ws.dir} is not yet known to forkpoint; try again when it ends`,
    "CALL_IN_PROGRESS",
  );
}

/**
 * What a restore of `manifestId` finds: the drift (paths), the changes from what forkpoint last saw to the target,
 * and those it applies to the directory as it is now (with drift, saved first when forced).
 */
function* restoreChanges(tx: Tx, state: WorkspaceState, ws: WorkspaceRow, manifestId: number, packs: PackCache) {
  // Its checkpoint was deleted and pruned since the move read it.
  if ((yield* tx.getManifest(manifestId)) === undefined) throw new NotFoundError("workspace snapshot", String(manifestId));
  const reader = new TreeReader();
  const known = yield* reader.rootOf(tx, ws.manifestId);
  const target = yield* reader.rootOf(tx, manifestId);
  const found = yield* diffTrees(tx, reader, known, target);
  const changed = yield* diffTrees(tx, reader, known, state.cache.root);
  // A file changed outside forkpoint into just what the restore would make it (content and mode, or deleted where the
  // target has none) is no drift: nothing there is overwritten, and the restore has nothing left to write there. Not
  // while a crash left a call's undo or replay unknown: the change may be that step's, refused until the call is
  // resolved (see `prepareRestore`'s advice).
  const goal = new Map(found.map((c) => [c.path, c.to]));
  const settled = changed.length === 0 || (yield* tx.uncertainInvocations(ws.sessionId)).length === 0;
  const same = new Set(settled ? changed.filter((c) => goal.has(c.path) && goal.get(c.path) === c.to).map((c) => c.path) : []);
  const unsettled = same.size === 0 ? found : found.filter((c) => !same.has(c.path));
  const seen = same.size === 0 ? changed : changed.filter((c) => !same.has(c.path));
  // Files the target has none of and ignores are left as they are (see target-rules.ts): a new one is no drift to
  // refuse or save, and one forkpoint knows (captured before a .gitignore line named it) is not deleted.
  const leftAlone = yield* ignoredByTarget(
    tx,
    ws,
    unsettled,
    [...seen.flatMap((c) => (c.from === null ? [c.path] : [])), ...unsettled.flatMap((c) => (c.to === null ? [c.path] : []))],
    packs,
  );
  const kept = (c: FileChange) => !(c.to === null && leftAlone.has(c.path));
  const changes = leftAlone.size === 0 ? unsettled : unsettled.filter(kept);
  const drifted = seen.filter((c) => !leftAlone.has(c.path)).map((c) => c.path);
  // The changes the restore will apply: with drift (to be saved first when forced), from the directory as it is now.
  const applied = drifted.length > 0 ? (yield* diffTrees(tx, reader, state.cache.root, target)).filter(kept) : changes;
  return { drifted, changes, applied, leftAlone, settled: [...same] };
}

/**
 * What a restore of `manifestId` would meet, without reading the contents it would write (what a plan says before the
 * move), by `prepareRestore`'s own checks (see `RestoreCheck`).
 */
export async function restoreCheck(ctx: EngineContext, ws: WorkspaceRow, manifestId: number): Promise<RestoreCheck> {
  const state = await stateOf(ctx, ws);
  const { drifted, applied, leftAlone } = await state.exclusive(async () => {
    await scan(ctx, state);
    return ctx.store.read((tx) => restoreChanges(tx, state, ws, manifestId, packCacheOf(ctx.store)));
  });
  let blocked = assertRestorable(ws.dir, applied);
  const foreign = blocked ? [] : foreignPaths(ws.dir, applied);
  if (foreign.length > 0) blocked = foreignText(foreign);
  // As the restore would apply them (drift saved first when forced): a file already there as the target has it is not
  // written, a new file the target ignores is not deleted.
  const writes = blocked ? [] : withoutForeign(ws.dir, applied, []);
  const written = writes.flatMap((c) => (c.to === null ? [] : [c.path]));
  const deleted = writes.flatMap((c) => (c.to === null && !leftAlone.has(c.path) ? [c.path] : []));
  return { drifted, blocked, leftAlone: [...leftAlone], written, deleted };
}

/** What `restoreCheck` finds. */
export interface RestoreCheck {
  /** Files changed since forkpoint last saw them: refused unless forced. */
  drifted: string[];
  /** Why the restore is refused even when forced, or null. */
  blocked: string | null;
  /** New files the target ignores: no drift, and left as they are. */
  leftAlone: string[];
  /** The files the restore would write and delete, from the directory as it is now (none when `blocked`). */
  written: string[];
  deleted: string[];
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
  /** New files the target ignores: no drift, and left as they are (see target-rules.ts). */
  leftAlone: string[];
  /** Paths of its `hold` it leaves as they are that it would have changed (see `prepareRestore`). */
  held?: string[];
  /**
   * Paths changed outside forkpoint into just what the restore makes them (no drift: nothing there is lost): what a
   * "both" move's undos write there before its restore is the move's own, which that restore sets right again.
   */
  settled?: string[];
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
