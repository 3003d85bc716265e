// plan: what a rollback, switch or edit would do, computed without doing it.
import type { Tx } from "../store/port/index.js";
import { parseOptions, planInput, type PlanTarget } from "../models/inputs.js";
import type { MovePlan, PlannedBranch } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession, sessionCheckpoint, sessionMessage } from "./core/owned.js";
import { branchOf } from "./log/lineage.js";
import { editPoint } from "./edit-point.js";
import { headOf } from "./core/head.js";
import { isSessionPosition } from "./moves/history.js";
import { computePlan, leftBehind } from "./moves/move-plan.js";

export async function plan(ctx: EngineContext, ref: SessionRef, target: PlanTarget): Promise<MovePlan> {
  const t = parseOptions(planInput, target, "target");
  return ctx.store.read((tx) => planUnit(tx, ctx, ref, t));
}

/** @internal A plan and where the session was when it was made: the `ifAt` that performs that plan or none. */
export interface PlanAt extends MovePlan {
  /** The session's current branch and its head position, read in the plan's transaction. */
  at: { branchId: string; head: number };
}

/**
 * @internal `plan`, with the session's current branch and head read in the same read transaction (`forkpoint ui`'s
 * `/api/plan`): passed back as the move's `ifAt`, the move performed is the one planned, or it is refused.
 */
export async function planAt(ctx: EngineContext, ref: SessionRef, target: PlanTarget): Promise<PlanAt> {
  const t = parseOptions(planInput, target, "target");
  return ctx.store.read((tx) => planAtUnit(tx, ctx, ref, t));
}

function* planAtUnit(tx: Tx, ctx: EngineContext, ref: SessionRef, t: Parameters<typeof planUnit>[3]) {
  const planned = yield* planUnit(tx, ctx, ref, t);
  const { currentBranchId } = yield* ownedSession(tx, ref.id, ref.userId);
  return { ...planned, at: { branchId: currentBranchId, head: (yield* tx.headPosition(currentBranchId)) ?? 0 } };
}

function* planUnit(
  tx: Tx,
  ctx: EngineContext,
  ref: SessionRef,
  t: { checkpointId: string } | { branchId: string } | { messageId: string },
) {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  let branch: PlannedBranch;
  if ("checkpointId" in t) {
    const cp = yield* sessionCheckpoint(tx, session, t.checkpointId, ctx.now());
    branch = { id: null, parentId: cp.branchId, forkPosition: cp.position, position: cp.position };
  } else if ("branchId" in t) {
    const b = yield* branchOf(tx, session, t.branchId);
    const position = (yield* headOf(tx, b)).position;
    branch = { id: b.id, parentId: b.parentId, forkPosition: b.forkPosition, position };
  } else {
    const { message: m, branch: of } = yield* sessionMessage(tx, session, t.messageId);
    const at = (yield* editPoint(tx, of, m)).position;
    branch = { id: null, parentId: m.branchId, forkPosition: at, position: at };
  }
  const target = { branchId: branch.id ?? branch.parentId!, position: branch.position };
  const computed = yield* computePlan(ctx, tx, session, target);
  const { undo, replay, unregistered } = computed.steps;
  // As the move decides it: a rollback to where the session and the world already are keeps the current branch.
  if ("checkpointId" in t && undo.length + replay.length + unregistered.length === 0 && (yield* isSessionPosition(tx, session, target))) {
    const current = (yield* tx.getBranch(session.currentBranchId))!;
    branch = { id: current.id, parentId: current.parentId, forkPosition: current.forkPosition, position: branch.position };
  }
  return {
    branch,
    undone: computed.steps.undo,
    replayed: computed.steps.replay,
    skipped: computed.steps.skipped,
    unregistered: computed.steps.unregistered,
    failed: [],
    unknown: computed.steps.unknown,
    leftBehind: yield* leftBehind(ctx, tx, computed),
  };
}
