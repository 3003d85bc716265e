// What a planned move with files would do to them: the restore's own checks, run without writing (see `plan`).
import { lstatSync } from "node:fs";
import { join } from "node:path";
import type { MovePlan } from "../../models/types.js";
import type { WorkspaceRow } from "../../store/port/index.js";
import type { EngineContext, SessionRef } from "../core/context.js";
import { restoreCheck } from "../workspace/prepare-restore.js";
import { heldPutBacks } from "./own-changes.js";
import { keptInTheWay } from "./kept-in-the-way.js";
import { writesInTheWay } from "./writes-in-the-way.js";
import type { PutBacks } from "./put-back.js";
import {
  plannedConversationDrift,
  putBackFiles,
  replayOver,
  type ConversationWrites,
  type PlannedPutBacks,
  type PutBackFile,
} from "./planned-drift.js";

/**
 * The snapshot a move with files restores, or `self`: a switch to the current branch, which moves no file (with
 * `reach`, a "both" one whose undos and replays write those paths, "all" when any: see `saveDriftBeforeTools`).
 */
export type RestoreTarget =
  | { ws: WorkspaceRow; manifestId: number; keep: readonly string[]; putBacks?: PlannedPutBacks; stopped?: PutBacks }
  | { self: true; ws?: WorkspaceRow; reach?: ReadonlySet<string> | "all"; putBacks?: PlannedPutBacks }
  | { conversation: ConversationWrites };

/**
 * `planned` with what its restore would do (null: a move that looks at no file): the files written, deleted and kept,
 * and the drift that refuses the move unless it is forced (then saved first), or what refuses it even then; for a
 * "conversation" move, which restores none, the drift its undos and replays would write over.
 */
export async function plannedRestore(
  ctx: EngineContext,
  ref: SessionRef,
  planned: MovePlan,
  restore: RestoreTarget | null,
): Promise<MovePlan> {
  const out = await plannedFiles(ctx, ref, planned, restore);
  // A step that writes through a symbolic link, or over what forkpoint does not capture, made there by hand refuses the
  // move first, forced or not (see writes-in-the-way.ts).
  const ws = restore === null ? undefined : "conversation" in restore ? restore.conversation.ws : restore.ws;
  const steps = planned.undone.length + planned.replayed.length > 0;
  const linked =
    ws && steps && (await ctx.store.read((tx) => writesInTheWay(tx, ws, planned.undone, planned.replayed, ctx.limits.maxPayloadBytes)));
  return linked ? { ...out, blocked: linked } : out;
}

/** `plannedRestore` but for the links its steps write through. */
async function plannedFiles(ctx: EngineContext, ref: SessionRef, planned: MovePlan, restore: RestoreTarget | null): Promise<MovePlan> {
  if (restore === null) return planned;
  // A "conversation" move restores no file: only the drift its undos and replays would write over (see conversation-drift.ts).
  if ("conversation" in restore) return { ...planned, ...(await plannedConversationDrift(ctx, ref, restore.conversation)) };
  if ("self" in restore) {
    const { ws, reach, putBacks } = restore;
    // Drift its calls' undos and replays would write over refuses it; drift elsewhere is left as it is.
    const drifted = ws && reach ? (await restoreCheck(ctx, ws, ws.manifestId)).drifted : [];
    const drift = drifted.filter((p) => reach === "all" || reach?.has(p));
    // No files step: a hand edit an undo puts back stays as it is (kept) unless forkpoint knows that content; a replay
    // that writes over one stops the switch before it, forced or not (see `refuseDriftBeforeReplays`).
    const kept = [...(putBacks?.paths ?? [])].flatMap(([p, f]) => (f.known || f.same ? [] : [p])).sort();
    // Known, yet it may stay as it is all the same (see `PutBackFile.overDrift`).
    const mayKeep = overDrift(putBacks, kept);
    const over = ws && putBacks ? replayOverSure(ws.dir, kept, putBacks) : {};
    const blocked = putBacks?.lost ?? over.blocked;
    const files = { written: [], deleted: [], ...(kept.length > 0 ? { kept } : {}), ...(mayKeep.length > 0 ? { mayKeep } : {}) };
    const replayed = ws && putBacks ? replayedOverStop(ws.dir, putBacks, kept) : undefined;
    const overStop = ws && putBacks ? overDriftStop(ws.dir, putBacks, mayKeep) : undefined;
    return {
      ...planned,
      files,
      drift,
      ...(blocked ? { blocked } : {}),
      ...mayStop(planned, over.mayStop, replayed, putBacks?.takenBack, overStop),
    };
  }
  const check = await restoreCheck(ctx, restore.ws, restore.manifestId);
  // The paths the move keeps as they are (an irreversible call's effect, see `irreversibleOutside`) do not move.
  const keep = new Set(restore.keep);
  // So do the hand edits a stopped move's undos put back, when this is that move called again (see `heldPutBacks`).
  const held = new Set("stopped" in restore ? heldPutBacks(restore.ws.dir, restore.stopped, restore.putBacks?.replays ?? "all") : []);
  for (const p of held) keep.add(p);
  // Nor do those where an undo puts back a hand edit: the files step leaves it as it is (kept) unless forkpoint knows
  // that content (then the restore writes over it) or it is just what the target holds there.
  const putBack = restore.putBacks?.paths ?? new Map<string, PutBackFile>();
  const back = await putBackFiles(ctx, restore.ws, putBack);
  const moves = (p: string) => !keep.has(p) && !putBack.has(p);
  const handEdits = back.kept.filter((p) => !keep.has(p));
  const kept = [
    ...new Set([
      ...[...check.written, ...check.deleted].filter((p) => keep.has(p)),
      ...check.drifted.filter((p) => held.has(p)),
      ...handEdits,
    ]),
  ].sort();
  // One already as the target has it once put back still changes, when it differs from the target now: by that undo.
  const same = (p: string) => back.same.includes(p) && !keep.has(p);
  const written = [...check.written.filter((p) => moves(p) || same(p)), ...back.written.filter((p) => !keep.has(p))].sort();
  const deleted = [...check.deleted.filter((p) => moves(p) || same(p)), ...back.deleted.filter((p) => !keep.has(p))].sort();
  // What a recorded call's undo puts back before the files step the plan cannot tell: kept when no checkpoint keeps it.
  // Those its arguments merely name (no file there, none in the target, none as it was recorded) it is not taken to
  // create; one it found a file at as it was recorded it may put back.
  const there = new Set([...check.written, ...check.deleted, ...check.drifted, ...(restore.putBacks?.recordedOver ?? [])]);
  const recordedKeep = [...(restore.putBacks?.recorded ?? [])].filter((p) => there.has(p) || existsIn(restore.ws.dir, p));
  // Those put back over an earlier put-back no checkpoint keeps may stay as they are too (see `PutBackFile.overDrift`).
  const overKept = overDrift(restore.putBacks, [...kept, ...keep]);
  const mayKeep = [...new Set([...recordedKeep, ...(restore.putBacks?.replayedOver ?? []), ...overKept])]
    .filter((p) => !kept.includes(p))
    .sort();
  const files = { written, deleted, ...(kept.length > 0 ? { kept } : {}), ...(mayKeep.length > 0 ? { mayKeep } : {}) };
  // A replay that writes over a hand edit put back stops the move there, forced or not (see `refuseReplayOver`).
  const over = restore.putBacks ? replayOverSure(restore.ws.dir, [...handEdits, ...held], restore.putBacks, held) : {};
  // A file put back and kept where the restore writes its folder as a file (or the reverse) refuses it once the undo ran,
  // kept also for another reason (an irreversible call's path) or not: the restore's own check refuses it then.
  const putFiles = back.kept.filter((p) => putBack.get(p)?.found !== null);
  const inTheWay = keptInTheWay(putFiles, written);
  const blocked = check.blocked ?? restore.putBacks?.lost ?? over.blocked ?? inTheWay;
  const drift = check.drifted.filter((p) => !held.has(p));
  const replayed = restore.putBacks ? replayedOverStop(restore.ws.dir, restore.putBacks, [...handEdits, ...held]) : undefined;
  // A file a recorded call's undo may put back (`mayKeep`) in the way of the restore stops the move there once it ran.
  const recordedInTheWay = keptInTheWay(
    recordedKeep.filter((p) => !kept.includes(p)),
    written,
  );
  const mayBeInTheWay =
    recordedInTheWay && `${recordedInTheWay} (if the undo of a call recorded with recordToolCall puts a file back there)`;
  return {
    ...planned,
    files,
    drift,
    ...(blocked ? { blocked } : {}),
    ...mayStop(
      planned,
      over.mayStop,
      replayed,
      restore.putBacks?.takenBack,
      mayBeInTheWay,
      restore.putBacks && overDriftStop(restore.ws.dir, restore.putBacks, overKept),
    ),
  };
}

/** The put-backs a checkpoint keeps that may stay drift all the same (see `PutBackFile.overDrift`), but those in `sure`. */
function overDrift(putBacks: PlannedPutBacks | undefined, sure: readonly string[]): string[] {
  return [...(putBacks?.paths ?? [])].flatMap(([p, f]) => (f.overDrift && !sure.includes(p) ? [p] : [])).sort();
}

/**
 * Where a put-back a checkpoint keeps may stay drift all the same (`maybe`, see `PutBackFile.overDrift`) that a replay
 * of the move then writes: the move stops there, forced or not, when it does.
 */
function overDriftStop(dir: string, putBacks: PlannedPutBacks, maybe: readonly string[]): string | undefined {
  const over = replayOver(dir, maybe, putBacks.replays);
  return (
    over &&
    `${over} (if what the last of those undos puts back, which a checkpoint keeps, still counts as changed by hand: an ` +
      "undo before it put back there a change no checkpoint keeps)"
  );
}

/**
 * Where the undo of a call applied by a replay may put back the hand edit its first run found (`replayedOver`, listed
 * in `mayKeep`) that a replay of the move then writes: the move stops there, forced or not, when it does (which no one
 * can tell before it runs). `sure`: the hand edits already planned to stop or refuse it.
 */
function replayedOverStop(dir: string, putBacks: PlannedPutBacks, sure: readonly string[]): string | undefined {
  const maybe = [...putBacks.replayedOver].filter((p) => !sure.includes(p)).sort();
  const over = replayOver(dir, maybe, putBacks.replays);
  return over && `${over} (if the undo of a call a replay applied puts back the hand edit its first run found there)`;
}

/**
 * What a replay over the hand edits `kept` put back does (see `replayOver`): refuses the move (`blocked`), or may stop
 * it (`mayStop`) where a recorded call's undo writes the file first, maybe with just that hand edit (see
 * `PutBackFile.uncertain`). `held`: a stopped move's put-backs, on disk already.
 */
function replayOverSure(
  dir: string,
  kept: readonly string[],
  putBacks: PlannedPutBacks,
  held: ReadonlySet<string> = new Set(),
): { blocked?: string; mayStop?: string } {
  const unsure = (p: string) => !held.has(p) && !!putBacks.paths.get(p)?.uncertain;
  // A deletion put back holds nothing a replay's write could lose: the move does not stop there (see `refuseReplayOver`).
  const deletion = (p: string) => !held.has(p) && !unsure(p) && putBacks.paths.get(p)?.found === null;
  const blocked = replayOver(
    dir,
    kept.filter((p) => !unsure(p) && !deletion(p)),
    putBacks.replays,
  );
  if (blocked) return { blocked };
  const mayStop = replayOver(dir, kept.filter(unsure), putBacks.replays);
  const unless = " (unless the undo of a call recorded with recordToolCall, which writes there first, puts back just that hand edit)";
  return mayStop ? { mayStop: mayStop + unless } : {};
}

/** `mayStop` as the plan says it: each place the move may stop (see `recordedOverPlanned`), then `reasons`. */
function mayStop(planned: MovePlan, ...reasons: (string | undefined)[]): { mayStop?: string } {
  const all = [planned.mayStop, ...reasons].filter((r): r is string => !!r);
  return all.length > 0 ? { mayStop: all.join("; or ") } : {};
}

/** Whether anything but a folder is at `path` (relative to `dir`), not through a link (a file on the way: nothing). */
function existsIn(dir: string, path: string): boolean {
  try {
    const st = lstatSync(join(dir, ...path.split("/")), { throwIfNoEntry: false });
    // A folder its arguments name (a command's cwd) is no file its undo writes: the files under it are named apart.
    return st !== undefined && !st.isDirectory();
  } catch {
    return false;
  }
}
