// A move's files part: the spec its journal keeps, and the checks that send a move with files another way.
import type { Step, Tx } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { irreversibleOutside, uncertainApplied } from "./failed-undo-files.js";
import { heldOtherwiseUnit } from "./move-files.js";
import type { SnapshotAt } from "./move-plan.js";
import type { BaseMoveSpec, MoveSpec } from "./move-spec.js";

/**
 * A move's files: the snapshot, the calls it holds, those of them whose application it holds was a replay, and the
 * calls the world shares with the target after it, left applied (see `ComputedPlan.stays`).
 */
export function filesOf(
  manifestId: number,
  covered: readonly { id: string }[],
  replays: Readonly<Record<string, number>>,
  stays: readonly string[],
): MoveSpec["files"] {
  const ids = covered.map((t) => t.id);
  const held = Object.fromEntries(ids.filter((id) => replays[id] !== undefined).map((id) => [id, replays[id]!]));
  return {
    manifestId,
    covered: ids,
    ...(Object.keys(held).length === 0 ? {} : { replays: held }),
    ...(stays.length === 0 ? {} : { stays: [...stays] }),
  };
}

/**
 * Whether a move with files to `base`'s target leaves some call's files as they are: an irreversible one's (see
 * `irreversibleOutside`), or one's a crash left of unknown outcome (see `uncertainApplied`).
 */
export function* keepsCallFiles(
  tx: Tx,
  ctx: EngineContext,
  sessionId: string,
  base: BaseMoveSpec,
  at: SnapshotAt | undefined,
): Step<boolean> {
  if ((yield* uncertainApplied(tx, sessionId)).length > 0) return true;
  const isReversible = (tool: string) => ctx.tools.isReversible(tool);
  return (yield* irreversibleOutside(tx, isReversible, sessionId, base.target, at)).length > 0;
}

/** Whether a move with files to `base`'s target would re-mark a call the restored snapshot holds by another application. */
export function* reheld(tx: Tx, ctx: EngineContext, sessionId: string, base: BaseMoveSpec): Step<boolean> {
  return (yield* heldOtherwiseUnit(tx, ctx, sessionId, base.target, base.newBranch?.forkCheckpointId ?? null, [])).length > 0;
}
