// What changed in the files while a move ran, outside its calls' files (a save by hand, a log an undo writes), is drift
// its files step leaves as it is; unless a crash interrupted one of its steps (that step may have made it), or a replay
// still to run writes it (the replay would overwrite it unsaved): the files step is then refused.
import { ConflictError } from "../../models/errors.js";
import type { MoveStepRow, Step, Tx } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { prepareRestore } from "../workspace/prepare-restore.js";
import { workspaceOf } from "../workspace/snapshots.js";

/** Whether the drift a files step finds may be left as it is: none of the move's `steps` was interrupted by a crash. */
export const mayLeaveDrift = (steps: readonly MoveStepRow[]): boolean => !steps.some((s) => s.status === "unknown");

/** The paths move `moveId`'s replays still to run may write: those their calls' runs changed ("all": one has no record). */
export function* replayPaths(tx: Tx, moveId: string): Step<Set<string> | "all"> {
  const out = new Set<string>();
  for (const step of yield* tx.moveSteps(moveId)) {
    if (step.op !== "replay" || step.status !== "pending") continue;
    const paths = yield* tx.callPaths(step.entryId);
    if (paths === undefined) return "all";
    for (const path of paths) out.add(path);
  }
  return out;
}

/** Refuses a files step whose drift (left as it is) a replay still to run would write over. */
export function refuseReplayOver(dir: string, drifted: readonly string[], replays: Set<string> | "all"): void {
  const over = replays === "all" ? [...drifted] : drifted.filter((p) => replays.has(p));
  if (over.length === 0) return;
  const shown = over.slice(0, 10).join(", ") + (over.length > 10 ? `, and ${over.length - 10} more` : "");
  throw new ConflictError(
    `the workspace ${dir} changed while this move ran (${shown}), and ${replays === "all" ? "a call it replays next may write" : "a call it replays next writes"} ` +
      `${over.length === 1 ? "it" : "them"}; take a checkpoint to keep those changes (or move with force: true), then move again`,
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
  if (drifted.length > 0) refuseReplayOver(ws.dir, drifted, await ctx.store.read((tx) => replayPaths(tx, moveId)));
}
