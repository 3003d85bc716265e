// Moving the world: journal the steps, run each undo/replay once, then make the target current.
// Used by rollback, edit, switchBranch, undo and redo, and by crash recovery to finish a journaled move.
// Just over 450 lines: one move protocol (plan, journal, run steps, finish) whose units share the move spec.
import { ValidationError } from "../../models/errors.js";
import { newId } from "../../models/ids.js";
import { moveOptions, parseOptions, type MoveOptions } from "../../models/inputs.js";
import type { SavedDrift, ToolInvocation } from "../../models/types.js";
import type { SessionRow, Step, Tx } from "../../store/port/index.js";
import type { EngineContext, SessionRef } from "../core/context.js";
import { ownedCurrent, ownedSession } from "../core/owned.js";
import { prepareMoveRestore, reportSavedDrift, saveDriftBeforeTools } from "./force.js";
import { prepareRestore, type PreparedRestore } from "../workspace/prepare-restore.js";
import { restoreFiles } from "../workspace/restore.js";
import { assertNoRestorePending } from "../workspace/restore-guards.js";
import { targetFiles, workspaceOf } from "../workspace/snapshots.js";
import { finishMoveTx } from "./finish-move.js";
import { moveEvent, recordStay, sessionPosition } from "./history.js";
import { restoreMoveFiles, snapshotPosition } from "./move-files.js";
import { refuseDriftBeforeReplays, replayReachIn } from "./drift-in-move.js";
import { conversationDrift, refuseLostSaves } from "./conversation-drift.js";
import { writtenPaths } from "./written-paths.js";
import { refuseKeptInTheWay } from "./kept-in-the-way.js";
import { refuseWritesInTheWay } from "./writes-in-the-way.js";
import { filesTrackPlan } from "./files-track.js";
import { computePlan } from "./move-plan.js";
import { type BaseMoveSpec, type MoveOutcome, type MoveSpec, type WithinMove } from "./move-spec.js";
import { inflightMoves } from "../core/ownership.js";
import { OwnChanges, heldPutBacks, stoppedPutBacks } from "./own-changes.js";
import { checkFilesPlanned, isReplannable, PLANNING_ATTEMPTS, type PlannedFiles } from "./files-planned.js";
import { inRunTurn } from "./move-turn.js";
import { holdsRunTurn } from "../workspace/run-turns.js";
import { isLocal } from "../workspace/host.js";
import { runJournaledMove } from "./run-steps.js";
import { awaitingSameRequest } from "./same-request.js";
import { checkIfAt, type IfAt } from "../core/if-at.js";
import { moveAnswer } from "./move-answer.js";
import { refuseActivity, refuseConcurrentMove, refuseLiveCalls, refuseMove } from "./refusals.js";
import { stayingHere, stayingPut } from "./staying-put.js";
import { filesOf, keepsCallFiles, reheld } from "./move-files-spec.js";
import { recordRequest, recordedAnswer, recordedIn, requestOf, type Request } from "../requests/ledger.js";
import { continueBlockBranches } from "./continued.js";
import { noteStackChange, stackBeforeMove, takeBackBlockMoves } from "./block-history.js";
export const NOTHING_TO_MOVE = { steps: { undo: [], replay: [], skipped: [], unregistered: [], unknown: [], covered: [] } } as const;

/** What a move is called with, for its request's fingerprint: the verb as the caller named it and its arguments. */
export interface MoveCall {
  verb: string;
  args: unknown;
  /** A retry's check of an argument the fingerprint leaves out, against the first call's outcome (see `requestOf`). */
  same?: (tx: Tx, outcome: MoveOutcome) => Step<boolean>;
}

/** How the conversation part of a move is made: once per request id, only while `ifAt` holds. */
interface MoveWrite {
  request?: Request<MoveOutcome> | undefined;
  ifAt?: IfAt | undefined;
  /** What the request's answer carries beyond the conversation's move (the files a "both" move restored). */
  extra?: Pick<MoveOutcome, "files" | "savedDrift">;
  /** A "both" move that restores no files: the calls a files-only restore set aside stay out (see `computePlan`). */
  keepAside?: boolean;
  /** A "conversation" move not yet checked for drift its tools would write over (see conversation-drift.ts). */
  checkDrift?: boolean;
}

export async function performMove(
  ctx: EngineContext,
  ref: SessionRef,
  verb: MoveSpec["kind"],
  options: MoveOptions | undefined,
  prepare: (tx: Tx, session: SessionRow) => Step<BaseMoveSpec>,
  within?: WithinMove,
  call?: MoveCall,
): Promise<MoveOutcome> {
  // No options (the usual call) is the defaults: nothing to validate.
  const parsed: MoveOptions = options === undefined || options === null ? {} : parseOptions(moveOptions, options, "options");
  const { requestId, ifAt, ...o } = parsed;
  const scope = o.scope ?? "conversation";
  // The same id again is answered from the ledger, looked up in the unit that plans the move: no tool runs twice.
  const request =
    requestId === undefined
      ? undefined
      : requestOf(requestId, call?.verb ?? verb, [call?.args ?? null, withDefaults(o)], moveAnswer, call?.same);
  return ctx.track(
    awaitingSameRequest(ctx, ref.id, request?.id, () =>
      ctx.withSessionLock(
        ref.id,
        async () => {
          // Its drift is checked once its planning unit finds a workspace and tools (no read more for a chat session).
          if (scope === "conversation") return moveConversation(ctx, ref, o, prepare, within, { request, ifAt, checkDrift: true });
          // Another handle's, process's or server's write between the files' planning and the conversation's is met by
          // planning the move again on what it left, as if it had come first.
          let earlier: SavedDrift | undefined;
          for (let attempt = 1; ; attempt++) {
            try {
              return await moveWithFiles(ctx, ref, scope, o, prepare, within, { request, ifAt }, earlier);
            } catch (error) {
              if (!isReplannable(error) || attempt >= PLANNING_ATTEMPTS) throw error;
              // A forced attempt's saved drift stays saved: the move that lands reports it.
              earlier ??= (error as { savedDrift?: SavedDrift }).savedDrift;
            }
          }
        },
        "exclusive",
        verb,
      ),
    ),
  );
}

/**
 * A move with files (scope "files" or "both"), planned files first; the caller holds the session's lock. `earlier`: the
 * drift an earlier attempt of this call saved (see `checkFilesPlanned`).
 */
async function moveWithFiles(
  ctx: EngineContext,
  ref: SessionRef,
  scope: "files" | "both",
  o: MoveOptions,
  prepare: (tx: Tx, session: SessionRow) => Step<BaseMoveSpec>,
  within: WithinMove | undefined,
  { request, ifAt }: Pick<MoveWrite, "request" | "ifAt">,
  earlier: SavedDrift | undefined,
): Promise<MoveOutcome> {
  // A retry must not save drift or restore files again either.
  if (request) {
    const recorded = await ctx.store.read((tx) => recordedAnswer(tx, ref, request));
    if (recorded) return recorded.value;
  }
  // Everything the files need is checked first (drift, contents, links in the way), so a refused move changes
  // nothing.
  const planned = await ctx.store.read((tx) => performMoveUnit(tx, ref, prepare, scope, ctx, o, ifAt));
  // A switch to the current branch moves no file: they are the branch's already, and restoring its newest snapshot
  // would take what its calls made since. With "both", the world moves as the conversation's does (nothing, when it
  // matches the branch), but the calls a files-only restore set aside stay out, as in any "both" move.
  if ("self" in planned) {
    if (scope === "files") return stayingPut(ctx, ref, { request });
    const run = planned.self === true ? undefined : planned.self;
    if (run === undefined) return moveConversation(ctx, ref, o, prepare, within, { request, ifAt, keepAside: true });
    // Calls to undo or replay on the files: drift they would write over is refused, or saved first when forced, as a
    // "both" move's restore does.
    const forced = await saveDriftBeforeTools(ctx, ref, run.ws, run.reach, o.force ? { move: run.kind } : null);
    const savedDrift = forced ?? earlier ?? null;
    const saved = savedDrift ? { savedDrift } : {};
    // The saved drift's checkpoint moved the head on: the conversation's unit checks the branch only.
    const stillAt = ifAt && forced ? { branchId: ifAt.branchId } : ifAt;
    const moved = moveConversation(ctx, ref, o, prepare, within, { request, ifAt: stillAt, extra: saved, keepAside: true });
    return { ...(await reportSavedDrift(savedDrift, moved)), ...saved };
  }
  // Planned again holding the directory's run turn (see move-turn.ts).
  if (planned.turn !== undefined)
    return inRunTurn(ctx, planned.turn, () => moveWithFiles(ctx, ref, scope, o, prepare, within, { request, ifAt }, earlier));
  const { ws, manifestId, from, kind, track, stopped, steps } = planned;
  // Called again after a stop: the hand edits the stopped move's undos put back stay as they are (see `heldPutBacks`).
  const hold = stopped ? heldPutBacks(ws.dir, stopped.putBacks, stopped.replays) : [];
  // A hand edit its undos put back in the way of the restore refuses it now, before any undo runs or drift is saved.
  if (steps) await refuseKeptInTheWay(ctx, ws, manifestId, steps, hold);
  const forced = await prepareMoveRestore(ctx, ref, ws, manifestId, o.force ? { move: kind } : null, hold);
  const savedDrift = forced.savedDrift ?? earlier ?? null;
  const saved = savedDrift ? { savedDrift } : {};
  if (scope === "both") {
    // The saved drift's checkpoint may be on the target's lineage (a move to the current branch's head): its files are
    // the target's snapshot now, the one the conversation's move plans its undos and replays around.
    const at = { branchId: from.fromBranchId, head: from.fromHead };
    const planned = forced.savedDrift
      ? await reportSavedDrift(savedDrift, filesNow(ctx, ref, prepare, forced.prepared))
      : { prepared: forced.prepared, at };
    // The saved drift's checkpoint moved the head on: the conversation's unit checks the branch only.
    const stillAt = ifAt && forced.savedDrift ? { branchId: ifAt.branchId } : ifAt;
    // The conversation's move is journaled first: the calls it leaves are undone on the files they changed, then
    // the files are restored to the target's snapshot, then the target's calls made after it are replayed on top.
    const w = { request, ifAt: stillAt, extra: saved };
    const moved = moveConversation(ctx, ref, o, prepare, within, w, { manifestId: planned.prepared.manifestId, ...planned });
    return { ...(await reportSavedDrift(savedDrift, moved)), ...saved };
  }
  // Saved drift is a checkpoint with a position of its own: the conversation stays there.
  const left = forced.savedDrift ? await ctx.store.read((tx) => leavingFrom(tx, ref)) : from;
  // Whatever fails from here on says where the drift was saved.
  const move = { scope, ...left, ...(track ? { track } : {}) };
  const files = await reportSavedDrift(savedDrift, restoreFiles(ctx, ref.id, forced.prepared, move));
  return { ...(await reportSavedDrift(savedDrift, stayingPut(ctx, ref, { request, extra: { files, ...saved } }))), files, ...saved };
}

/**
 * A "conversation" move (the caller holds the session's lock), its workspace's drift checked first: refused where its
 * undos and replays would write over a save by hand, or saved first with `force` (see conversation-drift.ts).
 */
async function moveConversationChecked(
  ctx: EngineContext,
  ref: SessionRef,
  o: MoveOptions,
  prepare: (tx: Tx, session: SessionRow) => Step<BaseMoveSpec>,
  within: WithinMove | undefined,
  { request, ifAt }: Pick<MoveWrite, "request" | "ifAt">,
): Promise<MoveOutcome> {
  const checked = await conversationDrift(ctx, ref, o, prepare, ifAt, request);
  // Planned again holding the directory's run turn (see move-turn.ts).
  if ("turn" in checked)
    return inRunTurn(ctx, checked.turn, () => moveConversationChecked(ctx, ref, o, prepare, within, { request, ifAt }));
  const { savedDrift } = checked;
  if (!savedDrift) return moveConversation(ctx, ref, o, prepare, within, { request, ifAt, checkDrift: false });
  // The saved drift's checkpoint moved the head on: the conversation's unit checks the branch only.
  const stillAt = ifAt ? { branchId: ifAt.branchId } : ifAt;
  const moved = moveConversation(ctx, ref, o, prepare, within, { request, ifAt: stillAt, extra: { savedDrift }, checkDrift: false });
  return { ...(await reportSavedDrift(savedDrift, moved)), savedDrift };
}

/** A move's options with their defaults spelled out: a retry that gives a default is the call that left it out. */
function withDefaults(o: MoveOptions): MoveOptions {
  return {
    onUndoError: o.onUndoError ?? "stop",
    refuseIrreversible: o.refuseIrreversible ?? false,
    scope: o.scope ?? "conversation",
    unregistered: o.unregistered ?? "refuse",
    force: o.force ?? false,
  };
}

function* performMoveUnit(
  tx: Tx,
  ref: SessionRef,
  prepare: (tx: Tx, session: SessionRow) => Step<BaseMoveSpec>,
  scope: "files" | "both",
  ctx: EngineContext,
  o: MoveOptions,
  ifAt: IfAt | undefined,
) {
  const { session, branch, head } = yield* ownedCurrent(tx, ref.id, ref.userId);
  yield* checkIfAt(tx, session, ifAt, head.position);
  const ws = yield* workspaceOf(tx, session.id, "scope");
  const base = yield* prepare(tx, session);
  // A switch to the current branch moves no file, whatever its scope (see `moveWithFiles`). With "both" and calls to
  // undo or replay, those run on the files: checked as a restore is (below) and for drift, refused before any is saved.
  const self = base.kind === "switch" && base.sameAsWorld;
  const selfSteps =
    self && scope === "both" && session.hasTools ? (yield* computePlan(ctx, tx, session, base.target, undefined, true)).steps : undefined;
  if (self && (selfSteps === undefined || selfSteps.undo.length + selfSteps.replay.length === 0)) return { self: true } as const;
  // Files are restored under no tool that still runs (its files would be overwritten under it).
  if (session.hasTools) yield* refuseLiveCalls(ctx, tx, session.id);
  if (!holdsRunTurn(ws.dir)) {
    // Another move under way (its tools, or its restore) holds the turn until it ends: refused now, before any drift
    // is saved, as its journaling would be.
    yield* refuseConcurrentMove(ctx, tx, session.id);
    return { turn: ws.dir };
  }
  if (selfSteps !== undefined) {
    refuseMove(selfSteps, o);
    yield* refuseWritesInTheWay(tx, ws, selfSteps.undo, selfSteps.replay, ctx.limits.maxPayloadBytes);
    if (selfSteps.undo.length > 0) refuseLostSaves(ws, (yield* writtenPaths(tx, ws, selfSteps.undo, [])).olderOver);
    // What the calls run on: the workspace, and the paths their runs changed.
    return { self: { ws, kind: base.kind, reach: yield* reachOf(ctx, tx, [...selfSteps.undo, ...selfSteps.replay]) } };
  }
  if (scope === "files" && base.kind === "edit") {
    throw new ValidationError("scope", 'an edit adds a message: use scope "both" (or "conversation")');
  }
  const forkCheckpointId = base.newBranch?.forkCheckpointId ?? null;
  const manifestId = yield* targetFiles(tx, ws, base.target, forkCheckpointId);
  // Files alone: the calls whose effects are in the files follow them (applied when the snapshot holds them).
  const track = scope === "files" ? yield* filesTrackPlan(ctx, tx, session, base.target, forkCheckpointId) : undefined;
  // The conversation's refusals come before any file moves.
  let replays: ReadonlySet<string> | "all" = new Set();
  let planSteps: { undo: ToolInvocation[]; replay: ToolInvocation[] } | undefined;
  if (scope === "both" && session.hasTools) {
    const snapshotAt = yield* snapshotPosition(tx, session.id, base.target, forkCheckpointId);
    const steps = (yield* computePlan(ctx, tx, session, base.target, snapshotAt)).steps;
    refuseMove(steps, o);
    // A step that writes through a link, or over what forkpoint does not capture, is refused (see writes-in-the-way.ts).
    if (session.hasWorkspace) yield* refuseWritesInTheWay(tx, ws, steps.undo, steps.replay, ctx.limits.maxPayloadBytes);
    // An older call's undo putting back the hand edit its run found over a later one put back: refused, forced or not.
    if (session.hasWorkspace) refuseLostSaves(ws, (yield* writtenPaths(tx, ws, steps.undo, [])).olderOver);
    // As its files step weighs them: a call whose run changed no file may write where its arguments name.
    replays = yield* replayReachIn(tx, ws.dir, steps.replay, yield* reachOf(ctx, tx, steps.replay));
    if (session.hasWorkspace) planSteps = steps;
  }
  const putBacks =
    scope === "both" && session.hasWorkspace ? yield* stoppedPutBacks(tx, session.id, base, planSteps?.undo ?? []) : undefined;
  const stopped = putBacks && { putBacks, replays };
  const from = { fromBranchId: branch.id, fromHead: head.position };
  return { ws, manifestId, from, kind: base.kind, track, stopped, ...(planSteps ? { steps: planSteps } : {}) };
}

/**
 * The paths the runs of `calls` changed, as recorded ("all": one has no record, or is a tool's acting only in the
 * workspace that changed none: run again over other files, it may change any of them, a delete of a file made since).
 */
export function* reachOf(ctx: EngineContext, tx: Tx, calls: readonly ToolInvocation[]): Step<Set<string> | "all"> {
  const out = new Set<string>();
  for (const call of calls) {
    const paths = yield* tx.callPaths(call.id);
    if (paths === undefined || (paths.length === 0 && ctx.tools.actsInWorkspaceOnly(call.tool))) return "all";
    for (const path of paths) out.add(path);
  }
  return out;
}

/**
 * The restore of a "both" move planned again after its drift was saved: `prepared` while its target's snapshot is the
 * same; and where the session is now (the saved drift's checkpoint moved its head on).
 */
async function filesNow(
  ctx: EngineContext,
  ref: SessionRef,
  prepare: (tx: Tx, session: SessionRow) => Step<BaseMoveSpec>,
  prepared: PreparedRestore,
): Promise<Omit<PlannedFiles, "manifestId">> {
  const now = await ctx.store.read((tx) => filesTargetUnit(tx, ref, prepare));
  if (now.manifestId === prepared.manifestId) return { prepared, at: now.at };
  return { prepared: await prepareRestore(ctx, now.ws, now.manifestId, false), at: now.at };
}

function* filesTargetUnit(tx: Tx, ref: SessionRef, prepare: (tx: Tx, session: SessionRow) => Step<BaseMoveSpec>) {
  const { session, branch, head } = yield* ownedCurrent(tx, ref.id, ref.userId);
  const ws = yield* workspaceOf(tx, session.id, "scope");
  const base = yield* prepare(tx, session);
  const manifestId = yield* targetFiles(tx, ws, base.target, base.newBranch?.forkCheckpointId ?? null);
  return { ws, manifestId, at: { branchId: branch.id, head: head.position } };
}

/** Where the session's conversation is before a move: what a restore's journal records. */
function* leavingFrom(tx: Tx, ref: SessionRef) {
  const { branch, head } = yield* ownedCurrent(tx, ref.id, ref.userId);
  return { fromBranchId: branch.id, fromHead: head.position };
}

/**
 * The conversation part of a move (the caller holds the session's lock). With `files` (scope "both", checked by the
 * caller), the move restores the workspace to snapshot `files.manifestId` between its undos and its replays.
 */
export async function moveConversation(
  ctx: EngineContext,
  ref: SessionRef,
  o: MoveOptions,
  prepare: (tx: Tx, session: SessionRow) => Step<BaseMoveSpec>,
  within?: WithinMove,
  w: MoveWrite = {},
  files?: PlannedFiles,
): Promise<MoveOutcome> {
  {
    // One write transaction plans the move and either finishes it (no tool has to run) or journals its steps,
    // so no other process can plan a move of this session in between.
    const planned = await ctx.store.write({ sessionId: ref.id }, (tx) => moveConversationUnit(tx, ref, ctx, prepare, within, o, w, files));
    // Planned again holding the workspace's run turn (see move-turn.ts).
    if (planned.turn !== undefined) return inRunTurn(ctx, planned.turn, () => moveConversation(ctx, ref, o, prepare, within, w, files));
    if (planned.checkDrift) return moveConversationChecked(ctx, ref, o, prepare, within, w);
    const { spec, done, moveId } = planned;
    if (done) {
      if (spec) ctx.events.emit(moveEvent(spec), done);
      if (!files || planned.answered) return done;
      // Already there, world included: only the files move (the request is recorded with them).
      const at = { fromBranchId: done.branch.id, fromHead: done.branch.head };
      const restored = await restoreFiles(ctx, ref.id, files.prepared, { scope: "files", ...at });
      return { ...(await stayingPut(ctx, ref, { request: w.request, extra: { ...w.extra, files: restored } })), files: restored };
    }
    // Tools undone or replayed change the workspace's files: forkpoint's own doing, not drift. A move that runs no
    // tool changes none but by its restore (which records what it writes): what else changes meanwhile is a hand edit.
    // Not where a file was changed by hand into just what the restore makes it: no drift, so what an undo writes there
    // is the move's own, which its restore sets right (taken for a hand edit, it would be left there, kept).
    const settled = files?.prepared.settled && new Set(files.prepared.settled);
    let own: OwnChanges;
    try {
      const tools = planned.plan.undo.length + planned.plan.replay.length > 0;
      own = await OwnChanges.start(ctx, ref.id, planned.hasWorkspace && tools, settled);
    } catch (error) {
      // Not run here after all: recovery (in this process too) finishes it.
      inflightMoves.delete(moveId);
      throw error;
    }
    const restore = files && (() => restoreMoveFiles(ctx, moveId, spec, files.prepared));
    // A "both" switch to the current branch restores no file, yet its undos may put a hand edit back: its replays do
    // not write over it unsaved (see `refuseDriftBeforeReplays`).
    const check = w.keepAside && !files ? () => refuseDriftBeforeReplays(ctx, ref.id, moveId) : undefined;
    return runJournaledMove(ctx, moveId, spec, within, restore, own, check);
  }
}

function* moveConversationUnit(
  tx: Tx,
  ref: SessionRef,
  ctx: EngineContext,
  prepare: (tx: Tx, session: SessionRow) => Step<BaseMoveSpec>,
  within: WithinMove | undefined,
  o: MoveOptions,
  w: MoveWrite,
  files: PlannedFiles | undefined,
) {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  // A request this session applied already: its answer, and nothing moves (before anything else can refuse it).
  if (w.request) {
    const recorded = yield* recordedIn(tx, session.id, w.request);
    if (recorded) return { spec: null, plan: NOTHING_TO_MOVE.steps, done: recorded.value, moveId: null, answered: true };
  }
  yield* checkIfAt(tx, session, w.ifAt);
  // A move of another process under way (a session with a workspace journals its restores, with no tool too) finishes
  // first: one journaled after it began would change the session, and the undo history, under it.
  if (session.hasTools || session.hasWorkspace) yield* refuseActivity(ctx, tx, session.id);
  // A move that may run tools on the workspace plans and runs holding its run turn: asked for before anything is written.
  if (session.hasTools && session.hasWorkspace) {
    const ws = yield* tx.getWorkspace(session.id);
    // Another process's "files" restore under way: its tool track and this move's undos and replays would both act
    // on the files. Checked where the move is journaled: that restore, once its journal is written, refuses this one.
    if (ws) assertNoRestorePending(ws);
    if (ws && !holdsRunTurn(ws.dir)) return { turn: ws.dir };
    // Its tools' writes over drift are checked first, outside this unit (see conversation-drift.ts).
    if (ws && w.checkDrift && isLocal(ws)) return { checkDrift: true } as const;
  }
  if (w.checkDrift && o.force && !session.hasWorkspace)
    throw new ValidationError("force", "applies to the workspace: the session has none");
  const base = yield* prepare(tx, session);
  if (w.request) base.request = { id: w.request.id, fingerprint: w.request.fingerprint, ...(w.extra ? { extra: w.extra } : {}) };
  // The files were planned in a unit of their own: this one moves the conversation around the same snapshot, or none.
  if (files) yield* checkFilesPlanned(tx, session, base, files);
  const filesManifest = files?.manifestId;
  const snapshotAt =
    filesManifest === undefined
      ? undefined
      : yield* snapshotPosition(tx, session.id, base.target, base.newBranch?.forkCheckpointId ?? null);
  // A session that never recorded a tool call has no world to move: skip reading the lineages.
  const computed = session.hasTools ? yield* computePlan(ctx, tx, session, base.target, snapshotAt, w.keepAside) : NOTHING_TO_MOVE;
  const plan = computed.steps;
  // Calls the world shares with the target after its snapshot stay applied: the files step keeps their paths.
  const stays = filesManifest === undefined || !("stays" in computed) ? [] : computed.stays;
  // Already there, world included (a second click): nothing is written, no event, nothing for undo.
  // Calls off the lineage left applied for want of their tool (`unregistered`) mean the world does not match.
  // A move with files that leaves a call applied under a kept one it cannot undo, an irreversible one its snapshot does
  // not hold, or one of unknown outcome, runs its files step as journaled moves do: the restore keeps that call's paths.
  const stopped =
    filesManifest !== undefined && (stays.length > 0 || plan.skipped.some((t) => t.applied && ctx.tools.isReversible(t.tool)));
  if (
    base.sameAsWorld &&
    !within &&
    !stopped &&
    plan.undo.length + plan.replay.length + plan.unregistered.length + plan.covered.length === 0 &&
    !(filesManifest !== undefined && session.hasTools && (yield* keepsCallFiles(tx, ctx, session.id, base, snapshotAt))) &&
    // A call applied by another application than the one the restored snapshot holds is re-marked by the files step.
    !(filesManifest !== undefined && session.hasTools && (yield* reheld(tx, ctx, session.id, base)))
  ) {
    const here = yield* stayingHere(tx, session, plan);
    const stack = ctx.readonly ? undefined : yield* stackBeforeMove(ctx, tx, session.id);
    // Undo after it takes back nothing older than what the user just did (see `recordStay`); a read-only handle, whose
    // move changes nothing, answers as a writable one would and writes nothing.
    if (!base.history && !base.unrecorded && !ctx.readonly)
      yield* recordStay(tx, session.id, base.kind, yield* sessionPosition(tx, session), ctx.now());
    // A failed block's rollback finding the session at the block's checkpoint (the block moved back there itself): the
    // branches the block wrote on or made are continued by the one the session is on, and its moves are no steps of
    // the undo history.
    if (base.unrecorded && !ctx.readonly) {
      yield* continueBlockBranches(tx, (yield* tx.getBranch(session.currentBranchId))!, base.target, base.blockBranches, base.blockStarts);
      yield* takeBackBlockMoves(tx, session.id, base.blockMoves);
      if (base.blockRequests) yield* tx.forgetRequests(session.id, base.blockRequests);
    }
    yield* noteStackChange(ctx, tx, session.id, stack);
    // Nothing moves, yet the request is applied: a retry finds it, and answers the same. A move with files records
    // it once they are restored.
    if (w.request && filesManifest === undefined)
      yield* recordRequest(ctx, tx, session.id, w.request, w.extra ? { ...here, ...w.extra } : here);
    return { spec: null, plan, done: here, moveId: null };
  }
  base.from = yield* sessionPosition(tx, session);
  // Thrown in the planning transaction: nothing is written.
  refuseMove(plan, o);
  // `base` is this call's own fresh object: completed in place rather than copied.
  const spec: MoveSpec = Object.assign(base, {
    onError: o.onUndoError ?? "stop",
    skipped: plan.skipped.map((t) => t.id),
    unregistered: plan.unregistered.map((t) => t.id),
    unknown: plan.unknown.map((t) => t.id),
    ...(filesManifest === undefined ? {} : { files: filesOf(filesManifest, plan.covered, snapshotAt?.replays ?? {}, stays) }),
  });
  // A move with files is journaled whatever it runs: its files step is one of its steps.
  if (plan.undo.length + plan.replay.length === 0 && !spec.files)
    return { spec, plan, done: yield* finishMoveTx(ctx, tx, spec, null, within), moveId: null };
  const putBacks = session.hasWorkspace ? yield* stoppedPutBacks(tx, session.id, spec, plan.undo) : undefined;
  if (putBacks) spec.putBacks = putBacks;
  const moveId = newId("mv");
  yield* tx.insertMove(
    {
      id: moveId,
      sessionId: session.id,
      kind: spec.kind,
      spec: JSON.stringify(spec),
      status: "running",
      ...ctx.ownership.self,
      createdAt: ctx.now(),
      finishedAt: null,
    },
    ctx.ownership.leaseMs,
  );
  // In the journaling transaction: another handle of this thread recovering next must not take it as a dead one's.
  inflightMoves.add(moveId);
  yield* tx.insertMoveSteps(
    [
      ...plan.undo.map((t) => ({ op: "undo" as const, entryId: t.id })),
      ...plan.replay.map((t) => ({ op: "replay" as const, entryId: t.id })),
    ].map((step, idx) => ({ moveId, idx, ...step, status: "pending" as const, result: null, error: null })),
  );
  return { spec, plan, done: null, moveId, hasWorkspace: session.hasWorkspace };
}
