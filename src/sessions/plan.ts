// plan: what a rollback, switch or edit would do, computed without doing it.
import { parseInput, planInput, type PlanTarget } from "../models/inputs.js";
import type { MovePlan, PlannedBranch } from "../models/types.js";
import type { EngineContext, SessionRef } from "./context.js";
import { branchOf, headOf } from "./lineage.js";
import { computePlan, leftBehind } from "./move-plan.js";
import { ownedSession, sessionCheckpoint, sessionMessage } from "./ownership.js";

export async function plan(ctx: EngineContext, ref: SessionRef, target: PlanTarget): Promise<MovePlan> {
  const t = parseInput(planInput, target, "plan");
  return ctx.store.read(() => {
    const store = ctx.store;
    const session = ownedSession(store, ref.id, ref.userId);
    let branch: PlannedBranch;
    if ("checkpointId" in t) {
      const cp = sessionCheckpoint(store, session, t.checkpointId, ctx.now());
      branch = { id: null, parentId: cp.branchId, forkPosition: cp.position, position: cp.position };
    } else if ("branchId" in t) {
      const b = branchOf(store, session, t.branchId);
      const position = headOf(store, b).position;
      branch = { id: b.id, parentId: b.parentId, forkPosition: b.forkPosition, position };
    } else {
      const { message: m } = sessionMessage(store, session, t.messageId);
      branch = { id: null, parentId: m.branchId, forkPosition: m.position - 1, position: m.position - 1 };
    }
    const computed = computePlan(ctx, session, { branchId: branch.id ?? branch.parentId!, position: branch.position });
    return {
      branch,
      undone: computed.steps.undo,
      replayed: computed.steps.replay,
      skipped: computed.steps.skipped,
      unregistered: computed.steps.unregistered,
      failed: [],
      unknown: computed.steps.unknown,
      leftBehind: leftBehind(ctx, computed),
    };
  });
}
