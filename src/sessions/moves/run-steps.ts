// Running a journaled move's steps: each undo or replay once, recorded as it starts and ends, fenced by the move's owner.
import { ConflictError, ToolReplayError, ToolUndoError, errorText } from "../../models/errors.js";
import { resultAsJson } from "../../models/json.js";
import type { MoveStepRow, Step, ToolRow, Tx } from "../../store/port/index.js";
import { abandonedAtClose, closedBeforeStart, notStartedAtClose, runHandler } from "../../tools/run-handler.js";
import type { EngineContext } from "../core/context.js";
import { toToolInvocation } from "../core/rows.js";
import { namedPaths } from "../workspace/named-paths.js";
import { fenced } from "./fence.js";
import { finishMove, journalReport } from "./finish-move.js";
import { holdLease, type HeldLease } from "./lease.js";
import { restoreMoveFiles, type RestoredFiles } from "./move-files.js";
import { type MoveOutcome, type MoveSpec, type WithinMove } from "./move-spec.js";
import { abandonedMoves, inflightMoves } from "../core/ownership.js";
import { OwnChanges, foundByPending, interruptedPaths, putBackPaths } from "./own-changes.js";
import { replayedApplication } from "./replayed-application.js";
import { keepUnrecorded, type StepOutcome } from "./unrecorded-steps.js";
import { targetLineage } from "./target-lineage.js";
import { asideCleared } from "../workspace/unapplied.js";
import { refuseReplayOver } from "./drift-in-move.js";
import { RecordedUndos, undoOverError, undoReach, unsavedIn } from "./recorded-over.js";
import { refuseTakenBack } from "./taken-back.js";
import { resumedInTheWay } from "./resumed-in-the-way.js";
import type { RestoreJournal } from "../workspace/restore-guards.js";

/**
 * The move's steps, the paths of those a crash interrupted (see `interruptedPaths`), the hand edits put back, and those
 * the undos still to run put back (see `foundByPending`).
 */
function* stepsOf(tx: Tx, moveId: string) {
  const rows = yield* tx.moveSteps(moveId);
  const interrupted = yield* interruptedPaths(tx, rows);
  return [rows, interrupted, yield* putBackPaths(tx, rows, interrupted), yield* foundByPending(tx, rows)] as const;
}

/**
 * Runs the pending steps of a journaled move in order, then finishes it. Throws under the `stop` policy. A move that
 * restores files (`spec.files`) does so after its undos and before its replays, with `restoreFiles` (by default
 * `restoreMoveFiles`, as recovery resumes it). `own`: the workspace's files tracked since before the first step (by
 * default from now on, as recovery resumes it). `beforeReplays`: in a move without files, the check its undos' changes
 * get before its replays run, where a files step would run (a "both" switch to the current branch: see move.ts).
 */
export async function runJournaledMove(
  ctx: EngineContext,
  moveId: string,
  spec: MoveSpec,
  within?: WithinMove,
  restoreFiles: () => Promise<RestoredFiles> = () => restoreMoveFiles(ctx, moveId, spec, null),
  own?: OwnChanges,
  beforeReplays?: () => Promise<void>,
): Promise<MoveOutcome> {
  inflightMoves.add(moveId);
  // The lease is held for the whole move, between steps as while a handler runs: a live owner keeps its move.
  const lease = holdMoveLease(ctx, spec.sessionId, moveId);
  let changes = own;
  try {
    const [steps, interrupted, putBack, found] = await ctx.store.read((tx) => stepsOf(tx, moveId));
    // Resumed by recovery: checked again before its next step, as it was before its first.
    if (own === undefined) await refuseResumedInTheWay(ctx, spec, moveId, steps);
    // A move of no undo or replay runs no tool: nothing it does to the files but its restore is its own (see move.ts).
    changes ??= await OwnChanges.start(ctx, spec.sessionId, steps.length > 0, interrupted, putBack, { moveId, found });
    // Called again after a stop: the hand edits that move's undos put back stay, as a resumed move's do.
    changes.holdStopped(spec.putBacks);
    // Resumed after a replay started, the files were restored already.
    let filesDue = spec.files !== undefined && !steps.some((s) => s.op === "replay" && s.status !== "pending");
    let files: RestoredFiles | undefined;
    // Checked once, before the first replay, refused as a files step is (the move stops there).
    let checkDue = spec.files === undefined && beforeReplays !== undefined;
    // Calls whose undo failed in this move ("continue") are still applied: their replay must not run them again.
    const stillApplied = new Set(steps.filter((s) => s.op === "undo" && s.status === "failed").map((s) => s.entryId));
    // A call undone first to be replayed on top (see `planSteps`) whose undo a crash interrupted may still be applied:
    // its replay is not run (left pending, never run by this move); it is reported unknown until resolved.
    const undoUnknown = new Set(steps.filter((s) => s.op === "undo" && s.status === "unknown").map((s) => s.entryId));
    // In a move without files, a call it undoes to replay on top stays applied when its undo fails ("continue"): the
    // undos after it (older applications) would run under its effect, so they are not run either (see `underFailed`).
    const replays = new Set(steps.filter((s) => s.op === "replay").map((s) => s.entryId));
    const staysOnTop = (s: MoveStepRow) => spec.files === undefined && s.op === "undo" && s.status === "failed" && replays.has(s.entryId);
    let above = steps.find(staysOnTop)?.entryId;
    // The files recorded calls' undos wrote, which an older call's undo (or a replay) writes only while they hold what
    // its call left there.
    const recorded = new RecordedUndos();
    if (changes.holding) for (const s of steps) if (s.status === "done") await recorded.ran(ctx, spec.sessionId, s);
    if (spec.files !== undefined && !filesDue) recorded.restored();
    for (const step of steps) {
      if (filesDue && step.op === "replay") {
        files = await filesStep(ctx, spec, moveId, restoreFiles, changes, true);
        recorded.restored();
        filesDue = false;
      }
      if (checkDue && step.op === "replay") {
        if (step.status === "pending") await filesStep(ctx, spec, moveId, async () => (await beforeReplays!(), NO_FILES), changes, true);
        checkDue = false;
      }
      // A step that failed before a crash, under "stop": the process died before recording the stop it causes.
      if (step.status === "failed" && spec.onError === "stop")
        throw await stopMove(ctx, spec, moveId, step, await journaledFailure(ctx, step));
      if (step.status !== "pending" || (step.op === "replay" && undoUnknown.has(step.entryId))) continue;
      if (step.op === "replay" && stillApplied.has(step.entryId)) {
        const cause = new Error("its undo failed in this move: it is still applied, so it is not run again");
        await ctx.store.write({ sessionId: spec.sessionId }, (tx) => failStepUnit(tx, ctx, step, stepErrorJson(cause)));
        continue;
      }
      if (step.op === "undo" && above !== undefined) {
        await ctx.store.write({ sessionId: spec.sessionId }, (tx) => failStepUnit(tx, ctx, step, stepErrorJson(underFailed(above!))));
        stillApplied.add(step.entryId);
        continue;
      }
      if (step.op === "replay") await refuseSavedOver(ctx, spec, moveId, step, changes);
      await refuseRecordedOver(ctx, spec, moveId, step, recorded);
      const failure = await runStep(ctx, spec, step, changes);
      if (!failure && changes.holding) await recorded.ran(ctx, spec.sessionId, step);
      if (failure && step.op === "undo") stillApplied.add(step.entryId);
      if (failure && staysOnTop({ ...step, status: "failed" })) above = step.entryId;
      // Closing stops a move as the stop policy does: no step starts after it, and calling the move again continues.
      if (failure && (spec.onError === "stop" || ctx.closing.aborted)) throw await stopMove(ctx, spec, moveId, step, failure);
    }
    if (filesDue) files = await filesStep(ctx, spec, moveId, restoreFiles, changes, false);
    // A request's answer carries the files restored, as the move's result does.
    if (files && spec.request) spec.request.extra = { ...spec.request.extra, files };
    // What the last steps changed is known while the move still runs: a move that finds none running (another handle's,
    // process's or server's) then finds the files as forkpoint last saw them, not drift.
    await changes.end();
    const outcome = await finishMove(ctx, spec, moveId, within);
    return files ? { ...outcome, files } : outcome;
  } finally {
    await changes?.end();
    await lease.release();
    inflightMoves.delete(moveId);
  }
}

/**
 * Before replay `step`: a file saved by hand during this move (see `OwnChanges.savedIn`) that its call's run wrote would
 * be overwritten unsaved (its stored result then says nothing of the save, so no undo brings it back). The move stops
 * there (`WORKSPACE_DRIFT`), the step not run and the files as they are, as its files step stops at drift a replay
 * writes (see `refuseReplayOver`): once a checkpoint keeps the save (or with `force`), calling the move again goes on.
 */
async function refuseSavedOver(ctx: EngineContext, spec: MoveSpec, moveId: string, step: MoveStepRow, own: OwnChanges): Promise<void> {
  if (!own.holding) return;
  const [paths, ws] = await ctx.store.read((tx) => replayReach(tx, spec.sessionId, step));
  const saved = own.savedIn(paths);
  if (saved.length === 0 || !ws) return;
  try {
    refuseReplayOver(ws.dir, saved, paths === undefined ? "all" : new Set(paths));
  } catch (error) {
    await ctx.store.write({ sessionId: spec.sessionId }, (tx) => stopMoveUnit(tx, moveId, ctx));
    throw error;
  }
}

/**
 * Before `step` (an undo or a replay): a file a recorded call's undo earlier in this move wrote that no longer holds what
 * `step`'s call left there (see recorded-over.ts). The move stops there (`WORKSPACE_DRIFT`), the step not run, as
 * `refuseSavedOver` stops it before a replay over a save.
 */
async function refuseRecordedOver(ctx: EngineContext, spec: MoveSpec, moveId: string, step: MoveStepRow, recorded: RecordedUndos) {
  const saves = await recorded.savesUnder(ctx, spec, step);
  if (!saves) return;
  await ctx.store.write({ sessionId: spec.sessionId }, (tx) => stopMoveUnit(tx, moveId, ctx));
  throw undoOverError(step, saves);
}

/** Stops a resumed move whose steps still to run write over something in the way (see resumed-in-the-way.ts). */
async function refuseResumedInTheWay(ctx: EngineContext, spec: MoveSpec, moveId: string, steps: readonly MoveStepRow[]) {
  const why = await ctx.store.read((tx) => resumedInTheWay(ctx, tx, spec.sessionId, steps));
  if (why === undefined) return;
  await ctx.store.write({ sessionId: spec.sessionId }, (tx) => stopMoveUnit(tx, moveId, ctx));
  throw new ConflictError(why, "WORKSPACE_DRIFT");
}

function* replayReach(tx: Tx, sessionId: string, step: MoveStepRow) {
  return [yield* tx.callPaths(step.entryId), yield* tx.getWorkspace(sessionId)] as const;
}

/** What a check standing in for a files step restores: nothing. */
const NO_FILES: RestoredFiles = { written: [], deleted: [] };

/** Why an undo is not run: a call applied after it, which the move keeps, could not be undone first. */
function underFailed(entryId: string): Error {
  return new Error(
    `applied before ${entryId}, which stays applied (its undo failed in this move): undone under it, it would take ` +
      "that call's effect with it, so it stays applied too",
  );
}

/** Records that a move stopped at `step`, and returns the error naming it (what was undone or replayed before it). */
export async function stopMove(
  ctx: EngineContext,
  spec: MoveSpec,
  moveId: string,
  step: MoveStepRow,
  failure: { tool: string; cause: unknown },
): Promise<Error> {
  const report = await ctx.store.write({ sessionId: spec.sessionId }, (tx) => stopMoveUnit(tx, moveId, ctx));
  const detail = { undone: report.undone, replayed: report.replayed, failed: report.failed, unknown: report.unknown };
  return step.op === "undo"
    ? new ToolUndoError(step.entryId, failure.tool, detail, failure.cause)
    : new ToolReplayError(step.entryId, failure.tool, detail, failure.cause);
}

/**
 * A move's files step. Refused before a file moved (drift, a link in the way, the workspace changed meanwhile), the
 * move stops there as under the stop policy: calling it again continues. A restore that failed midway stays journaled
 * with the move: recovery finishes the files, then resumes the move.
 */
async function filesStep(
  ctx: EngineContext,
  spec: MoveSpec,
  moveId: string,
  restoreFiles: () => Promise<RestoredFiles>,
  own: OwnChanges,
  replaysFollow: boolean,
): Promise<RestoredFiles> {
  try {
    // The undos' changes are known before the files are checked for drift and restored; the replays' after. With no
    // replay after the files, nothing the move does changes them again: what changes meanwhile is a hand edit.
    await own.pause();
    const restored = await restoreFiles();
    own.restored();
    if (replaysFollow) await own.resume();
    return restored;
  } catch (error) {
    // Only its own restore, stopped midway, keeps the move journaled (recovery finishes both); refused before it began
    // (another move's restore under way, drift), the move stops.
    const ws = await ctx.store.read((tx) => tx.getWorkspace(spec.sessionId));
    if (!restoringFor(ws?.restoring, moveId)) await ctx.store.write({ sessionId: spec.sessionId }, (tx) => stopMoveUnit(tx, moveId, ctx));
    throw error;
  }
}

/** Whether a workspace's restore journal is move `moveId`'s own (one written before moves were named: taken to be). */
function restoringFor(journal: string | null | undefined, moveId: string): boolean {
  if (!journal) return false;
  const { move } = JSON.parse(journal) as Pick<RestoreJournal, "move">;
  return move === undefined ? true : move === moveId;
}

function* stopMoveUnit(tx: Tx, moveId: string, ctx: EngineContext) {
  fenced(yield* tx.renewMove(moveId, ctx.ownership.self, ctx.ownership.leaseMs ?? 0));
  yield* tx.finishMove(moveId, "failed", ctx.now());
  return yield* journalReport(ctx, tx, moveId);
}

/** A failed step's tool and error as its journal recorded them. */
export async function journaledFailure(ctx: EngineContext, step: MoveStepRow): Promise<{ tool: string; cause: unknown }> {
  const message = (JSON.parse(step.error ?? "{}") as { message?: string }).message ?? "failed";
  return { tool: (await ctx.store.read((tx) => stepToolUnit(tx, step))).tool as string, cause: new Error(message) };
}

function* stepToolUnit(tx: Tx, step: MoveStepRow) {
  return (yield* tx.getTool(step.entryId))!;
}

/** Runs one step; what its handler changed in the workspace (`own`) is known before the step is recorded. */
export async function runStep(
  ctx: EngineContext,
  spec: MoveSpec,
  step: MoveStepRow,
  own?: OwnChanges,
): Promise<{ tool: string; cause: unknown } | null> {
  // Closing: no step starts, and the move stays journaled with this one pending, as a crash before it leaves them.
  if (ctx.closing.aborted) throw closedBeforeStart(`the ${step.op} of invocation ${step.entryId}`);
  const withPaths = own?.holding === true;
  const idleAsked = spec.files !== undefined && step.op === "undo";
  const { row, paths, idle, unseen, found, named, left } = await ctx.store.write({ sessionId: spec.sessionId }, (tx) =>
    startStepUnit(tx, ctx, spec.sessionId, step, withPaths, idleAsked),
  );
  // An undo changes the files its call's run changed; a replay runs the same call again, so changes them too.
  own?.expect(paths, unseen, step.op, left, found.size > 0 ? found : undefined);
  // What a recorded call's undo put back, once it ran, stays drift where a hand edit may be lost (see `unsavedIn`).
  const leaveDrift = async () => own?.leaveDrift(named, await unsavedIn(ctx, spec, named));
  const invocation = toToolInvocation(row);
  let resultText: string | null = null;
  try {
    const tool = ctx.tools.get(invocation.tool);
    const undo = tool.undo;
    if (!undo)
      throw new ConflictError(
        `tool ${JSON.stringify(tool.name)} has no undo here: its call is neither undone nor replayed`,
        "TOOL_NOT_REGISTERED",
      );
    const call = {
      tool,
      step: step.op,
      sessionId: spec.sessionId,
      invocationId: row.id,
      mode: "move",
      during: spec.kind,
      closing: ctx.closing,
      abandoned: (work: Promise<unknown>) => {
        abandonedMoves.add(step.moveId);
        void work.then(() => abandonedMoves.delete(step.moveId));
      },
    } as const;
    const handlerCtx = (signal: AbortSignal) => ({
      sessionId: spec.sessionId,
      userId: spec.userId,
      invocationId: row.id,
      callId: invocation.callId,
      replay: step.op === "replay",
      signal,
    });
    // A timed-out handler is a failed step; whatever it returns later is not recorded. A call that did nothing (see
    // `pathlessReach`) has nothing to undo: its undo, run over files it never touched, could only change what others made
    // of them, and the move's restore brings the target's files back anyway.
    if (step.op === "undo") {
      const result = row.appliedResult === null ? invocation.result : (JSON.parse(row.appliedResult) as unknown);
      if (!idle) await runHandler(call, (signal) => undo({ args: invocation.args, result }, handlerCtx(signal)));
      await refuseTakenBack(ctx, spec, step, own);
    } else {
      resultText = resultAsJson(await runHandler(call, (signal) => tool.run(invocation.args, handlerCtx(signal))), ctx.limits);
    }
  } catch (cause) {
    // Closed while the handler ran, which may still finish: the step stays running and the move journaled, as a crash
    // there leaves them. The next recovery reports the step unknown and never runs it again (see recovery.ts).
    if (abandonedAtClose(ctx.closing, cause)) throw cause;
    // Closed before the handler started: it never ran, so the step is pending again and the move stays journaled, for
    // the next call or recovery to run it once (not a failed undo). Left running when that write fails: then unknown.
    if (notStartedAtClose(cause)) {
      await ctx.store.write({ sessionId: spec.sessionId }, (tx) => pendingStepUnit(tx, ctx, step)).catch(() => undefined);
      throw cause;
    }
    await leaveDrift();
    await own?.step();
    const error = stepErrorJson(cause);
    await recording(ctx, spec.sessionId, step, { status: "failed", error }, (tx) => failStepUnit(tx, ctx, step, error));
    return { tool: invocation.tool, cause };
  }
  await leaveDrift();
  const putBacks = await own?.step(step.op === "undo");
  // An undo's journal keeps the hand edits it put back: a move called again after a stop holds them (`stoppedPutBacks`).
  if (step.op === "undo" && putBacks && Object.keys(putBacks).length > 0) resultText = JSON.stringify({ putBack: putBacks });
  const done = { status: "done", result: resultText } as const;
  await recording(ctx, spec.sessionId, step, done, (tx) => completeStepUnit(tx, ctx, step, resultText, spec));
  ctx.events.emit(step.op === "undo" ? "undo" : "replay", { ...invocation, applied: step.op === "replay" });
  return null;
}

/**
 * Writes a finished step's record. When the write fails (a lost connection, say: it may have landed or not), this
 * process keeps the outcome and writes it as one of its handles resumes the move (see `claimUnit` in recovery.ts),
 * instead of reporting the step unknown.
 */
async function recording(
  ctx: EngineContext,
  sessionId: string,
  step: MoveStepRow,
  outcome: StepOutcome,
  unit: (tx: Tx) => Step<void>,
): Promise<void> {
  try {
    await ctx.store.write({ sessionId }, unit);
  } catch (error) {
    keepUnrecorded(step, outcome);
    throw error;
  }
}

/** A finished step's record: "done" (an undo leaves its call unapplied, a replay applies it with its result). */
export function* completeStepUnit(tx: Tx, ctx: EngineContext, step: MoveStepRow, resultText: string | null, spec: MoveSpec) {
  fenced(yield* tx.setMoveStep(ctx.ownership.self, step.moveId, step.idx, "done", resultText, null, ctx.ownership.leaseMs));
  const sessionId = spec.sessionId;
  if (step.op === "undo") yield* tx.unmarkApplied(step.entryId);
  else {
    // Applied on the target's lineage: set aside on another branch, it stays out of moves there.
    const through = yield* asideCleared(tx, sessionId, step.entryId, () => targetLineage(tx, spec));
    yield* tx.markApplied(step.entryId, sessionId, resultText, ctx.now(), through);
    // Kept past prune of this move: files restored later may hold this replay's effect (see latest-result.ts).
    yield* tx.keepReplayResult(step.entryId, sessionId, resultText, ctx.now());
  }
}

/** A failed step's error as its journal records it. */
function stepErrorJson(cause: unknown): string {
  return JSON.stringify({ message: errorText(cause) });
}

/** A failed step's record, with its error as `stepErrorJson` makes it. */
export function* failStepUnit(tx: Tx, ctx: EngineContext, step: Pick<MoveStepRow, "moveId" | "idx">, error: string) {
  fenced(yield* tx.setMoveStep(ctx.ownership.self, step.moveId, step.idx, "failed", null, error, ctx.ownership.leaseMs));
}

/** A started step whose handler never ran (forkpoint closed first): pending again. */
function* pendingStepUnit(tx: Tx, ctx: EngineContext, step: Pick<MoveStepRow, "moveId" | "idx">) {
  fenced(yield* tx.setMoveStep(ctx.ownership.self, step.moveId, step.idx, "pending", null, null, ctx.ownership.leaseMs));
}

/**
 * Starts a step: its call, the paths its run changed (`withPaths`) and, for an undo, those of them that held a hand edit
 * as it began (`unseen`) or, a recorded call's, the files its arguments name (`named`), and (`idleAsked`: an undo in a move with files) whether the call did nothing, a run of a tool
 * acting only in the workspace that changed no file.
 */
function* startStepUnit(tx: Tx, ctx: EngineContext, sessionId: string, step: MoveStepRow, withPaths: boolean, idleAsked: boolean) {
  fenced(yield* tx.setMoveStep(ctx.ownership.self, step.moveId, step.idx, "running", null, null, ctx.ownership.leaseMs));
  const row = (yield* tx.getTool(step.entryId))!;
  const paths = withPaths || idleAsked ? yield* tx.callPaths(step.entryId) : undefined;
  const idle = idleAsked && paths?.length === 0 && ctx.tools.actsInWorkspaceOnly(row.tool ?? "");
  // An undo puts back what its call's run found, a hand edit included: that stays drift, never taken for the move's. A
  // replay's application found what the world held then, forkpoint's own (a move's files): only the first run's counts.
  const firstRun = step.op === "undo" && !(yield* replayedApplication(tx, row));
  const unseen = withPaths && firstRun ? yield* tx.callHandEdited(step.entryId) : [];
  // A replayed application's undo puts back what the replay found: its first run's hand edit again, where a rewind had
  // put that back and the replay ran over it (told once the undo ran, by its file id; see `OwnChanges.step`).
  const found = new Map<string, string>();
  if (withPaths && step.op === "undo" && !firstRun)
    for (const [path, ids] of yield* tx.callHandEditIds(step.entryId)) if (ids.found !== null) found.set(path, ids.found);
  // A recorded call's undo puts back what its result says: in the files its arguments name, no content forkpoint saw.
  const reach = withPaths && step.op === "undo" && paths === undefined ? yield* undoReach(tx, sessionId, step) : undefined;
  const held = withPaths ? yield* undoneWhereNamed(tx, sessionId, step, row, paths) : undefined;
  return { row, paths: held, idle, unseen, found, named: reach?.named ?? [], left: reach?.left };
}

/**
 * The paths `step` is held to: those its call's run changed; for a call whose run changed none (a delete of a missing
 * file), those its arguments name, where it is undone or run again (a replay deletes the file an earlier replay made).
 * Drift there was weighed before the move began (see `writtenPaths`, `replayPaths`): what the step writes there is its
 * own doing, never a save by hand during the move that a later step would stop at or give way to.
 */
function* undoneWhereNamed(tx: Tx, sessionId: string, step: MoveStepRow, row: ToolRow, paths: string[] | undefined) {
  if (paths === undefined) return paths;
  const ws = yield* tx.getWorkspace(sessionId);
  if (!ws) return paths;
  const named = namedPaths(ws.dir, toToolInvocation(row).args);
  if (paths.length === 0) return named;
  // A folder its arguments name above a file its run wrote (it made that folder): undone or run again, it changes
  // what stands there (a file a later restore put back), which the drift check before the move weighed too.
  const above = named.filter((n) => !paths.includes(n) && paths.some((p) => p.startsWith(`${n}/`)));
  return above.length === 0 ? paths : [...paths, ...above];
}

/**
 * On stores whose owners hold leases, renews this move's lease every third of it for as long as this thread runs the
 * move: between steps, while a slow handler runs, while it finishes (each journal update renews it too). A renewal
 * that finds the move taken over stops renewing: the next journal update is then refused (`MOVE_TAKEN_OVER`).
 */
function holdMoveLease(ctx: EngineContext, sessionId: string, moveId: string): HeldLease {
  return holdLease(ctx, sessionId, `move ${moveId}`, (tx, leaseMs) => tx.renewMove(moveId, ctx.ownership.self, leaseMs));
}
