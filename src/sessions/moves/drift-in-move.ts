// What changed in the files while a move ran, outside its calls' files (a save by hand, a log an undo writes), is drift
// its files step leaves as it is; unless a crash interrupted one of its steps (that step may have made it), or a replay
// still to run writes it (the replay would overwrite it unsaved): the files step is then refused.
import { shownNames } from "../../models/unsafe-text.js";
import { ConflictError } from "../../models/errors.js";
import type { MoveStepRow, Step, Tx } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { prepareRestore } from "../workspace/prepare-restore.js";
import { workspaceOf } from "../workspace/snapshots.js";
import { namedPaths, reaches } from "../workspace/named-paths.js";
import { toToolInvocation } from "../core/rows.js";
import { diskFileId } from "../workspace/disk-file-id.js";
import type { ToolInvocation } from "../../models/types.js";

/** Whether the drift a files step finds may be left as it is: none of the move's `steps` was interrupted by a crash. */
export const mayLeaveDrift = (steps: readonly MoveStepRow[]): boolean => !steps.some((s) => s.status === "unknown");

/**
 * The paths move `moveId`'s replays still to run may write: those their calls' runs changed ("all": one has no record);
 * for a call whose run changed none (a delete of a missing file), those its arguments name in workspace `dir` (a folder
 * reaching what is under it, see `reaches`): run again, it may write there.
 */
export function* replayPaths(tx: Tx, moveId: string, dir: string): Step<Set<string> | "all"> {
  const out = new Set<string>();
  for (const step of yield* tx.moveSteps(moveId)) {
    if (step.op !== "replay" || step.status !== "pending") continue;
    const paths = yield* tx.callPaths(step.entryId);
    if (paths === undefined) return "all";
    for (const path of paths) out.add(path);
    const row = paths.length === 0 ? yield* tx.getTool(step.entryId) : undefined;
    for (const path of row ? namedPaths(dir, toToolInvocation(row).args) : []) out.add(path);
  }
  return out;
}

/**
 * The paths replaying `calls` may write, weighed as `replayPaths` weighs a move's replays (`reach`: their runs' paths,
 * see `reachOf`), with what the arguments of one whose run changed none name in workspace `dir`: a move called again
 * after a stop holds a put-back hand edit as it is only outside them, or its files step refuses what it held.
 */
export function* replayReachIn(
  tx: Tx,
  dir: string,
  calls: readonly ToolInvocation[],
  reach: Set<string> | "all",
): Step<Set<string> | "all"> {
  if (reach === "all") return reach;
  const out = new Set(reach);
  for (const call of calls) {
    const paths = yield* tx.callPaths(call.id);
    for (const path of paths?.length === 0 ? namedPaths(dir, call.args) : []) out.add(path);
  }
  return out;
}

/** A hand edit a move's undo put back: the call whose undo did, and whether it was a deletion. */
export interface PutBackBy {
  call: string;
  deletion: boolean;
}

/** The hand edits move `moveId`'s finished undos put back (their calls' runs found them there), by path. */
export function* putBackBy(tx: Tx, moveId: string): Step<Map<string, PutBackBy>> {
  const out = new Map<string, PutBackBy>();
  for (const step of yield* tx.moveSteps(moveId)) {
    if (step.op !== "undo" || step.status !== "done" || step.result === null) continue;
    const made = (JSON.parse(step.result) as { putBack?: Record<string, unknown> }).putBack ?? {};
    for (const [path, print] of Object.entries(made)) if (!out.has(path)) out.set(path, { call: step.entryId, deletion: print === null });
  }
  return out;
}

/** What `refuseReplayOver` weighs: the paths move `moveId`'s replays still to run may write, and its put-back hand edits. */
export function* replaysOver(tx: Tx, moveId: string, dir: string): Step<readonly [Set<string> | "all", Map<string, PutBackBy>]> {
  return [yield* replayPaths(tx, moveId, dir), yield* putBackBy(tx, moveId)] as const;
}

/**
 * Refuses a files step whose drift (left as it is) a replay still to run would write over. A hand edit one of the
 * move's own undos put back (`putBack`) is named as such: no one changed it while the move ran; one that is a deletion
 * does not stop it.
 */
export function refuseReplayOver(
  dir: string,
  drifted: readonly string[],
  replays: Set<string> | "all",
  putBack: ReadonlyMap<string, PutBackBy> = new Map(),
): void {
  // A deletion an undo put back holds nothing a replay's write could lose: no reason to stop. A file there since is
  // another step's write (a recorded call's undo), or a save: changed while the move ran, not that put-back.
  const deleted = new Set(drifted.filter((p) => putBack.get(p)?.deletion));
  const empty = new Set([...deleted].filter((p) => diskFileId(dir, p) === null));
  const lost = drifted.filter((p) => !empty.has(p));
  const over = replays === "all" ? lost : lost.filter((p) => reaches(replays, p));
  if (over.length === 0) return;
  const back = over.filter((p) => putBack.has(p) && !deleted.has(p));
  if (back.length === over.length) {
    const calls = [...new Set(back.map((p) => putBack.get(p)!.call))];
    throw new ConflictError(
      `this move's undo of ${calls.length === 1 ? "call" : "calls"} ${calls.join(", ")} put back ${back.length === 1 ? "a change" : "changes"} made ` +
        `by hand in the workspace ${dir} (${back.join(", ")}), kept in no checkpoint, and a call it replays next writes over ` +
        `${back.length === 1 ? "it" : "them"}; the move stopped there, with the change on disk: take a checkpoint to keep ` +
        `${back.length === 1 ? "it" : "them"}, then move again (or move again with force: true, which saves ${back.length === 1 ? "it" : "them"} first)`,
      "WORKSPACE_DRIFT",
    );
  }
  const shown = shownNames(over);
  throw new ConflictError(
    `the workspace ${dir} changed while this move ran (${shown}), and ${replays === "all" ? "a call it replays next may write" : "a call it replays next writes"} ` +
      `${over.length === 1 ? "it" : "them"}; take a checkpoint to keep those changes, then move again (or move again with force: true, ` +
      "which saves them first)",
    "WORKSPACE_DRIFT",
  );
}

/**
 * The check a "both" move that restores no files (a switch to the current branch) makes where a files step would run,
 * between its undos and its replays: drift a replay still to run writes (a hand edit an undo put back, a save by hand
 * since) is refused, as that step refuses it (see `refuseReplayOver`); drift elsewhere is left as it is.
 */
export async function refuseDriftBeforeReplays(ctx: EngineContext, sessionId: string, moveId: string): Promise<void> {
  const ws = await ctx.store.read((tx) => workspaceOf(tx, sessionId, "scope"));
  // The files as forkpoint last saw them, "restored": no change, only the drift check.
  const { drifted } = await prepareRestore(ctx, ws, ws.manifestId, "leave", moveId);
  if (drifted.length === 0) return;
  const [replays, putBack] = await ctx.store.read((tx) => replaysOver(tx, moveId, ws.dir));
  refuseReplayOver(ws.dir, drifted, replays, putBack);
}
