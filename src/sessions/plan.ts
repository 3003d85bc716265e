// plan: what a rollback, switch or edit would do, computed without doing it.
import type { SessionRow, Tx } from "../store/port/index.js";
import { parsePlanTarget, type PlanTarget } from "../models/inputs.js";
import { ValidationError } from "../models/errors.js";
import type { MovePlan, PlannedBranch } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession, sessionCheckpoint, sessionMessage } from "./core/owned.js";
import { branchOf } from "./log/lineage.js";
import { editPoint } from "./edit-point.js";
import { headOf } from "./core/head.js";
import { isSessionPosition } from "./moves/history.js";
import { landingOf } from "./moves/continued.js";
import { computePlan, leftBehind } from "./moves/move-plan.js";
import { snapshotPosition } from "./moves/move-files.js";
import { keptCallPaths } from "./moves/failed-undo-files.js";
import { reachOf } from "./moves/move.js";
import { plannedRestore, type RestoreTarget } from "./moves/planned-restore.js";
import { conversationWrites, plannedPutBacks } from "./moves/planned-drift.js";
import { stoppedPutBacks } from "./moves/own-changes.js";
import { targetFiles, workspaceOf } from "./workspace/snapshots.js";
import { recordedOverPlanned, recordedOverText } from "./moves/recorded-over.js";
import { savedOverPlanned } from "./moves/saved-over-planned.js";
import { finishStoppedMoves, liveWork, withLiveWork } from "./moves/live-work-planned.js";
import type { ToolInvocation } from "../models/types.js";

type Target = ReturnType<typeof parsePlanTarget>["target"];
type Scope = ReturnType<typeof parsePlanTarget>["scope"];

export async function plan(ctx: EngineContext, ref: SessionRef, target: PlanTarget): Promise<MovePlan> {
  const { target: t, scope } = parsePlanTarget(target);
  await finishStoppedMoves(ctx, ref.id);
  const { planned, restore } = await ctx.store.read((tx) => planUnit(tx, ctx, ref, t, scope));
  const live = await ctx.store.read((tx) => liveWork(ctx, tx, ref.id));
  return withLiveWork(ctx, await plannedRestore(ctx, ref, planned, restore), live);
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
  const { target: t, scope } = parsePlanTarget(target);
  await finishStoppedMoves(ctx, ref.id);
  const { planned, restore, at } = await ctx.store.read((tx) => planAtUnit(tx, ctx, ref, t, scope));
  const live = await ctx.store.read((tx) => liveWork(ctx, tx, ref.id));
  return { ...withLiveWork(ctx, await plannedRestore(ctx, ref, planned, restore), live), at };
}

function* planAtUnit(tx: Tx, ctx: EngineContext, ref: SessionRef, t: Target, scope: Scope) {
  const planned = yield* planUnit(tx, ctx, ref, t, scope);
  const { currentBranchId } = yield* ownedSession(tx, ref.id, ref.userId);
  return { ...planned, at: { branchId: currentBranchId, head: (yield* tx.headPosition(currentBranchId)) ?? 0 } };
}

function* planUnit(tx: Tx, ctx: EngineContext, ref: SessionRef, t: Target, scope: Scope) {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  let branch: PlannedBranch;
  // The checkpoint a rollback forks at: its own files are the ones a move with files restores.
  let checkpointId: string | null = null;
  if ("checkpointId" in t) {
    const cp = yield* sessionCheckpoint(tx, session, t.checkpointId, ctx.now());
    branch = { id: null, parentId: cp.branchId, forkPosition: cp.position, position: cp.position };
    checkpointId = cp.id;
  } else if ("branchId" in t) {
    // As the switch decides it: a failed guarded block's branch is entered where the block never ran.
    const landing = yield* landingOf(tx, yield* branchOf(tx, session, t.branchId));
    const b = landing.branch;
    // Entered as before a failed block on a fork the move makes: not made yet, as a rollback's.
    if (landing.continues) branch = { id: null, parentId: b.parentId, forkPosition: b.forkPosition, position: b.forkPosition };
    else branch = { id: b.id, parentId: b.parentId, forkPosition: b.forkPosition, position: (yield* headOf(tx, b)).position };
  } else {
    const { message: m, branch: of } = yield* sessionMessage(tx, session, t.messageId);
    const at = (yield* editPoint(tx, of, m)).position;
    branch = { id: null, parentId: m.branchId, forkPosition: at, position: at };
  }
  const target = { branchId: branch.id ?? branch.parentId!, position: branch.position };
  if (scope === "conversation") {
    const planned = yield* conversationPlan(tx, ctx, session, t, branch, target);
    // Its undos and replays write the workspace's files: the move refuses drift there (see conversation-drift.ts).
    const move = { kind: kindOf(t), target };
    const writes = yield* conversationWrites(tx, session, move, planned.undone, planned.replayed);
    return { planned: { ...planned, ...(yield* mayStopOf(tx, session, planned, false)) }, restore: writes && { conversation: writes } };
  }
  // As the move checks them: the session's workspace, on this host; an edit adds a message, so its files move with it.
  const ws = yield* workspaceOf(tx, session.id, "scope");
  if (scope === "files" && "messageId" in t)
    throw new ValidationError("scope", 'an edit adds a message: use scope "both" (or "conversation")');
  // A switch to the current branch moves no file, whatever its scope (see `moveWithFiles`).
  const self = "branchId" in t && branch.id === session.currentBranchId;
  if (scope === "files") {
    // The conversation stays where it is and no tool runs: the calls follow the files (marked, never run).
    const here = (yield* tx.getBranch(session.currentBranchId))!;
    const head = (yield* headOf(tx, here)).position;
    const stays = { id: here.id, parentId: here.parentId, forkPosition: here.forkPosition, position: head };
    const planned = { branch: stays, ...NO_STEPS, leftBehind: [] };
    return { planned, restore: self ? ({ self: true } as const) : yield* restoreOf(tx, ws, target, checkpointId) };
  }
  if (self) {
    // With "both", the calls a files-only restore set aside stay out, as in any "both" move.
    const planned = { ...(yield* conversationPlan(tx, ctx, session, t, branch, target, undefined, true)) };
    Object.assign(planned, yield* mayStopOf(tx, session, planned, false));
    const calls = [...planned.undone, ...planned.replayed];
    if (calls.length === 0) return { planned, restore: { self: true } as const };
    const reach = yield* reachOf(ctx, tx, calls);
    // The hand edits its undos put back stay as they are, unless a replay then writes over one (see `refuseReplayOver`).
    const putBacks = yield* plannedPutBacks(tx, session.id, planned.undone, planned.replayed, ws.manifestId);
    return { planned, restore: { self: true as const, ws, reach, putBacks } };
  }
  // Calls its snapshot holds come back with its files (applied again, not run): neither undone nor replayed.
  const snapshotAt = yield* snapshotPosition(tx, session.id, target, checkpointId);
  const planned = { ...(yield* conversationPlan(tx, ctx, session, t, branch, target, snapshotAt)) };
  Object.assign(planned, yield* mayStopOf(tx, session, planned, true));
  const files = yield* restoreOf(tx, ws, target, checkpointId);
  const restore = {
    ...files,
    keep: yield* keptCallPaths(tx, (tool) => ctx.tools.isReversible(tool), session.id, target, snapshotAt),
    // The hand edits its undos put back stay as they are (see put-back.ts).
    putBacks: yield* plannedPutBacks(tx, session.id, planned.undone, planned.replayed, files.manifestId),
    // Called again after a stop, those the stopped move's undos put back stay too (see `heldPutBacks`).
    stopped: yield* stoppedPutBacks(tx, session.id, { kind: kindOf(t), target }, planned.undone),
  };
  return { planned, restore };
}

/**
 * Where the move may stop partway over what a recorded call's undo puts back, as its steps check it (see
 * `recordedOverPlanned`); `filesStep`: a "both" move that restores files between its undos and its replays.
 */
function* mayStopOf(
  tx: Tx,
  session: SessionRow,
  planned: { undone: readonly ToolInvocation[]; replayed: readonly ToolInvocation[] },
  filesStep: boolean,
) {
  if (!session.hasWorkspace) return {};
  const steps = [
    ...planned.undone.map((t) => ({ op: "undo" as const, entryId: t.id })),
    ...planned.replayed.map((t) => ({ op: "replay" as const, entryId: t.id })),
  ];
  const over = (yield* recordedOverPlanned(tx, session.id, steps, filesStep)).map(recordedOverText);
  over.push(...(yield* savedOverPlanned(tx, session.id, steps)));
  return over.length > 0 ? { mayStop: over.join("; or ") } : {};
}

/** The move a plan's target makes. */
const kindOf = (t: Target): "rollback" | "switch" | "edit" => ("checkpointId" in t ? "rollback" : "branchId" in t ? "switch" : "edit");

/** A plan's tool steps when no tool runs. */
const NO_STEPS = { undone: [], replayed: [], skipped: [], unregistered: [], failed: [], unknown: [] };

function* restoreOf(
  tx: Tx,
  ws: Parameters<typeof targetFiles>[1],
  target: { branchId: string; position: number },
  checkpointId: string | null,
) {
  return { ws, manifestId: yield* targetFiles(tx, ws, target, checkpointId), keep: [] as string[] } satisfies RestoreTarget;
}

function* conversationPlan(
  tx: Tx,
  ctx: EngineContext,
  session: SessionRow,
  t: Target,
  planned: PlannedBranch,
  target: { branchId: string; position: number },
  snapshotAt?: Parameters<typeof computePlan>[4],
  keepAside = false,
) {
  let branch = planned;
  const computed = yield* computePlan(ctx, tx, session, target, snapshotAt, keepAside);
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
