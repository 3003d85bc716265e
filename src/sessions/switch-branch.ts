// switchBranch: make another branch current; the world moves to its head.
import type { SessionRow, Step, Tx } from "../store/port/index.js";
import type { BaseMoveSpec } from "./moves/move-spec.js";
import type { MoveOptions } from "../models/inputs.js";
import type { MoveResult } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { branchOf } from "./log/lineage.js";
import { headOf } from "./core/head.js";
import { performMove } from "./moves/move.js";
import { forkLandingSpec, landingOf } from "./moves/continued.js";

export async function switchBranch(ctx: EngineContext, ref: SessionRef, branchId: string, options?: MoveOptions): Promise<MoveResult> {
  return performMove(ctx, ref, "switch", options, (tx, session) => switchBranchUnit(tx, session, branchId), undefined, {
    verb: "switchBranch",
    args: branchId,
  });
}

function* switchBranchUnit(tx: Tx, session: SessionRow, branchId: string): Step<BaseMoveSpec> {
  // A failed guarded block's branch, its head as the block left it, is entered where the block never ran.
  const landing = yield* landingOf(tx, yield* branchOf(tx, session, branchId));
  const branch = landing.branch;
  if (landing.continues) return forkLandingSpec(session, branch, landing.continues);
  return {
    kind: "switch",
    sessionId: session.id,
    userId: session.userId,
    target: { branchId: branch.id, position: (yield* headOf(tx, branch)).position },
    // The current branch, world in place: nothing to do (no event, nothing for undo).
    sameAsWorld: branch.id === session.currentBranchId,
    newBranch: null,
    edit: null,
  };
}
