// A recorded call's undo writes back what its result says the file held as it ran: forkpoint cannot tell a hand edit
// made before that call from the content an older call left there, so the drift check before the move leaves the file
// to that undo (see `recordedDrift`). An older call's undo in the same move (or a replay) then writes there: it runs
// only while the file holds what that call's run left there, or content a checkpoint keeps; anything else (the hand
// edit the recorded undo put back) stops the move, which a checkpoint keeping it (or a move with `force`, saving it
// first) lets go on.
import { lstatSync } from "node:fs";
import { join } from "node:path";
import { ConflictError } from "../../models/errors.js";
import type { MoveStepRow, Step, Tx } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { toToolInvocation } from "../core/rows.js";
import { diskFileId } from "../workspace/disk-file-id.js";
import { namedPaths, reaches } from "../workspace/named-paths.js";
import { DRIFTED_ONLY } from "../workspace/named-files.js";
import { heldInCheckpoints } from "./held-in-checkpoint.js";
import type { MoveSpec } from "./move-spec.js";

/**
 * The files recorded calls' undos in a move wrote (their arguments name them, as their records say), each with the
 * call whose undo wrote it last: the move's undos of calls with recorded paths writing there since take them off.
 */
export class RecordedUndos {
  readonly #by = new Map<string, string>();

  /**
   * After `step` of the move ran (done): what a recorded call's undo wrote, or no longer (a replay applies its call
   * again: what it writes is that call's effect).
   */
  async ran(ctx: EngineContext, sessionId: string, step: MoveStepRow): Promise<void> {
    afterStep(this.#by, step, await ctx.store.read((tx) => undoReach(tx, sessionId, step)));
  }

  /** After the move's files step: the files are as it restored or kept them, its own doing or drift it checked. */
  restored(): void {
    this.#by.clear();
  }

  /**
   * The files of `step`'s call's paths (an undo's or a replay's) a recorded call's undo wrote in this move that hold
   * other than what that call's run left there, in content no checkpoint of the session keeps (see the file's comment):
   * what `step` would write over unsaved, with the recorded calls that put it back. A deletion keeps no content (as the drift
   * check before the move weighs it). Null: none.
   */
  async savesUnder(
    ctx: EngineContext,
    spec: Pick<MoveSpec, "userId" | "sessionId">,
    step: MoveStepRow,
  ): Promise<{ dir: string; paths: string[]; calls: string[] } | null> {
    if (this.#by.size === 0) return null;
    const reach = await ctx.store.read((tx) => leftBy(tx, spec.sessionId, step));
    if (!reach) return null;
    const changed = new Map<string, string>();
    for (const [path, left] of reach.left) {
      if (!this.#by.has(path)) continue;
      const now = diskFileId(reach.dir, path);
      if (namedFolder(reach.dir, path, left, now)) continue;
      // Not a file (a folder, a link, unreadable): no checkpoint holds it as such ("" is no file id).
      if (now !== left && now !== null) changed.set(path, now ?? "");
    }
    const paths = await keptInNone(ctx, spec, changed);
    if (paths.length === 0) return null;
    return { dir: reach.dir, paths, calls: [...new Set(paths.map((path) => this.#by.get(path)!))] };
  }
}

/**
 * `RecordedUndos.ran`'s bookkeeping after `step` ran (`reach`: its `undoReach`): the files a recorded call's undo wrote
 * last, each with that call, in `by`.
 */
function afterStep(by: Map<string, string>, step: Pick<MoveStepRow, "op" | "entryId">, reach: { written: string[]; named: string[] }) {
  for (const path of reach.written) by.delete(path);
  for (const path of reach.named) {
    if (step.op === "undo") by.set(path, step.entryId);
    else by.delete(path);
  }
}

/** A named folder (a shell's cwd), recorded as no file, and a folder still: its files are weighed each on its own. */
const namedFolder = (dir: string, path: string, left: string | null, now: string | null | undefined): boolean =>
  now === undefined && (left === null || left === DRIFTED_ONLY) && isFolder(dir, path);

/** Where a planned move may stop at `RecordedUndos.savesUnder`: the step, the paths, and the recorded calls before it. */
export interface RecordedOver {
  dir: string;
  step: string;
  paths: string[];
  calls: string[];
}

/**
 * Where a move whose steps are `steps` (in the order it runs them; `filesStep`: a files step runs before the first
 * replay) may stop at `RecordedUndos.savesUnder`, read from the records the move reads, before it runs (see `plan`):
 * each step whose call left a file that a recorded call's undo before it writes. What that undo puts back is its tool's
 * own (its result, no record of forkpoint's): the move stops there only if that is other than what the step's call left
 * there and in no checkpoint (a hand edit made before the recorded call, say), which no one can tell before the undo
 * ran. Empty: no step of it can stop there.
 */
export function* recordedOverPlanned(
  tx: Tx,
  sessionId: string,
  steps: readonly Pick<MoveStepRow, "op" | "entryId">[],
  filesStep: boolean,
): Step<RecordedOver[]> {
  const out: RecordedOver[] = [];
  const by = new Map<string, string>();
  let filesDue = filesStep;
  for (const step of steps) {
    if (filesDue && step.op === "replay") {
      by.clear();
      filesDue = false;
    }
    if (by.size > 0) {
      const reach = yield* leftBy(tx, sessionId, step);
      const paths = [...(reach?.left ?? [])].flatMap(([path, left]) =>
        by.has(path) && !namedFolder(reach!.dir, path, left, diskFileId(reach!.dir, path)) ? [path] : [],
      );
      if (paths.length > 0)
        out.push({ dir: reach!.dir, step: step.entryId, paths, calls: [...new Set(paths.map((path) => by.get(path)!))] });
    }
    afterStep(by, step, yield* undoReach(tx, sessionId, step));
  }
  return out;
}

/**
 * Those of `paths` (the files a recorded call's undo just wrote, as its arguments name them) that hold content no
 * checkpoint of the session keeps: what it put back there may be a hand edit made before that call, left as drift. A
 * deletion, or content a checkpoint keeps, loses nothing written over: the move's own doing, as any undo's write.
 */
export async function unsavedIn(
  ctx: EngineContext,
  spec: Pick<MoveSpec, "userId" | "sessionId">,
  paths: readonly string[],
): Promise<string[]> {
  if (paths.length === 0) return [];
  const ws = await ctx.store.read((tx) => tx.getWorkspace(spec.sessionId));
  if (!ws) return [];
  const files = new Map<string, string>();
  const other: string[] = [];
  for (const path of paths) {
    const now = diskFileId(ws.dir, path);
    if (now === undefined) other.push(path);
    else if (now !== null) files.set(path, now);
  }
  return [...other, ...(await keptInNone(ctx, spec, files))];
}

/** The paths of `files` (path → the file id it holds) whose content no checkpoint of the session keeps. */
export async function keptInNone(
  ctx: EngineContext,
  spec: Pick<MoveSpec, "userId" | "sessionId">,
  files: ReadonlyMap<string, string>,
): Promise<string[]> {
  if (files.size === 0) return [];
  const held = await ctx.store.read((tx) => heldInCheckpoints(tx, spec.userId, spec.sessionId, files, ctx.now()));
  return [...files.keys()].filter((path) => !held.has(path));
}

/**
 * What `step` wrote: its call's recorded paths, or (a recorded call's) the files its arguments name as recorded, with
 * what each held as it was recorded (`left`: a file id, null no file).
 */
export function* undoReach(tx: Tx, sessionId: string, step: Pick<MoveStepRow, "entryId">) {
  const none = { written: [] as string[], named: [] as string[], left: new Map<string, string | null>() };
  const written = yield* tx.callPaths(step.entryId);
  if (written !== undefined) return { ...none, written };
  const files = yield* tx.recordedFiles(step.entryId);
  const row = files && (yield* tx.getTool(step.entryId));
  const ws = row && (yield* tx.getWorkspace(sessionId));
  if (!ws) return none;
  // A named folder's files too (a shell's cwd): its undo writes there as in a file named as such.
  const reach = new Set(namedPaths(ws.dir, toToolInvocation(row).args).filter((path) => files.has(path)));
  const named = [...files.keys()].filter((path) => reaches(reach, path));
  return { ...none, named, left: new Map(named.map((path) => [path, files.get(path) ?? null])) };
}

/**
 * What `step`'s call's run left in the paths it changed (a recorded call's: what the files its arguments name held as it
 * was recorded), and the workspace's folder; null: no record of them.
 */
function* leftBy(tx: Tx, sessionId: string, step: Pick<MoveStepRow, "entryId">) {
  const outputs = (yield* tx.callOutputs(step.entryId)) ?? (yield* tx.recordedFiles(step.entryId));
  // Where its run found a hand edit, what it left there is kept apart from its outputs (see `callHandEditIds`).
  const found = yield* tx.callHandEditIds(step.entryId);
  const left = new Map([...(outputs ?? []), ...[...found].map(([path, ids]) => [path, ids.left] as const)]);
  const ws = (outputs || found.size > 0) && (yield* tx.getWorkspace(sessionId));
  return ws ? { dir: ws.dir, left } : null;
}

/** The refusal of `step` over `saves` (see `RecordedUndos.savesUnder`): the move stops there, the files as they are. */
export function undoOverError(step: MoveStepRow, saves: { dir: string; paths: string[]; calls: string[] }): ConflictError {
  const { dir, paths, calls } = saves;
  const one = paths.length === 1;
  return new ConflictError(
    `this move's undo of recorded ${calls.length === 1 ? "call" : "calls"} ${calls.join(", ")} put back in ${paths.join(", ")} ` +
      `in the workspace ${dir} other than what call ${step.entryId} left there (made by no call forkpoint ran, by hand ` +
      `maybe, and kept in no checkpoint), and the ${step.op} of ${step.entryId} writes over ${one ? "it" : "them"}; ` +
      "the move stopped there, with " +
      `${one ? "the change" : "the changes"} on disk: take a checkpoint to keep ${one ? "it" : "them"}, then move again ` +
      `(or move again with force: true, which saves ${one ? "it" : "them"} first)`,
    "WORKSPACE_DRIFT",
  );
}

/** Why a planned move may stop partway (see `recordedOverPlanned`), as `plan` says it: what `undoOverError` then says. */
export function recordedOverText(over: RecordedOver): string {
  const { dir, step, paths, calls } = over;
  const one = paths.length === 1;
  return (
    `this move's undo of recorded ${calls.length === 1 ? "call" : "calls"} ${calls.join(", ")} writes ${paths.join(", ")} ` +
    `in the workspace ${dir}, and a later step of it (call ${step}'s) writes ${one ? "it" : "them"} next; what that undo ` +
    "puts back is its tool's own, which forkpoint cannot tell before it runs: other than what call " +
    `${step} left there and kept in no checkpoint (a change made by hand before the recorded call, say), the move stops ` +
    `there (WORKSPACE_DRIFT), forced or not, with it on disk: take a checkpoint to keep it, then move again`
  );
}

/** Whether `path` (relative to `dir`) is a folder now, not through a link. */
function isFolder(dir: string, path: string): boolean {
  try {
    return lstatSync(join(dir, ...path.split("/"))).isDirectory();
  } catch {
    return false;
  }
}
