// Running a journaled move's steps: each undo or replay once, recorded as it starts and ends, fenced by the move's owner.
import { ConflictError, ToolReplayError, ToolUndoError, errorText } from "../../models/errors.js";
import { resultAsJson } from "../../models/json.js";
import type { MoveStepRow, ToolRow, Tx } from "../../store/port/index.js";
import { runHandler } from "../../tools/run-handler.js";
import type { EngineContext } from "../core/context.js";
import { toToolInvocation } from "../core/rows.js";
import { fenced } from "./fence.js";
import { finishMove, journalReport } from "./finish-move.js";
import { holdLease, type HeldLease } from "./lease.js";
import { inflightMoves, type MoveOutcome, type MoveSpec, type WithinMove } from "./move-spec.js";

/** Runs the pending steps of a journaled move in order, then finishes it. Throws under the `stop` policy. */
export async function runJournaledMove(ctx: EngineContext, moveId: string, spec: MoveSpec, within?: WithinMove): Promise<MoveOutcome> {
  inflightMoves.add(moveId);
  // The lease is held for the whole move, between steps as while a handler runs: a live owner keeps its move.
  const lease = holdMoveLease(ctx, spec.sessionId, moveId);
  try {
    const steps = await ctx.store.read((tx) => tx.moveSteps(moveId));
    for (const step of steps) {
      // A step that failed before a crash, under "stop": the process died before recording the stop it causes.
      if (step.status === "failed" && spec.onError === "stop")
        throw await stopMove(ctx, spec, moveId, step, await journaledFailure(ctx, step));
      if (step.status !== "pending") continue;
      const failure = await runStep(ctx, spec, step);
      // Closing stops a move as the stop policy does: no step starts after it, and calling the move again continues.
      if (failure && (spec.onError === "stop" || ctx.closing.aborted)) throw await stopMove(ctx, spec, moveId, step, failure);
    }
    return await finishMove(ctx, spec, moveId, within);
  } finally {
    await lease.release();
    inflightMoves.delete(moveId);
  }
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
  const detail = { undone: report.undone, replayed: report.replayed, failed: report.failed };
  return step.op === "undo"
    ? new ToolUndoError(step.entryId, failure.tool, detail, failure.cause)
    : new ToolReplayError(step.entryId, failure.tool, detail, failure.cause);
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

export async function runStep(ctx: EngineContext, spec: MoveSpec, step: MoveStepRow): Promise<{ tool: string; cause: unknown } | null> {
  const row = await ctx.store.write({ sessionId: spec.sessionId }, (tx) => startStepUnit(tx, ctx, step));
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
    } as const;
    const handlerCtx = (signal: AbortSignal) => ({
      sessionId: spec.sessionId,
      userId: spec.userId,
      invocationId: row.id,
      callId: invocation.callId,
      replay: step.op === "replay",
      signal,
    });
    // A timed-out handler is a failed step; whatever it returns later is not recorded.
    if (step.op === "undo") {
      const result = row.appliedResult === null ? invocation.result : (JSON.parse(row.appliedResult) as unknown);
      await runHandler(call, (signal) => undo({ args: invocation.args, result }, handlerCtx(signal)));
    } else {
      resultText = resultAsJson(await runHandler(call, (signal) => tool.run(invocation.args, handlerCtx(signal))), ctx.limits);
    }
  } catch (cause) {
    await ctx.store.write({ sessionId: spec.sessionId }, (tx) => failStepUnit(tx, ctx, step, cause));
    return { tool: invocation.tool, cause };
  }
  await ctx.store.write({ sessionId: spec.sessionId }, (tx) => completeStepUnit(tx, ctx, step, resultText, row, spec));
  ctx.events.emit(step.op === "undo" ? "undo" : "replay", { ...invocation, applied: step.op === "replay" });
  return null;
}

function* completeStepUnit(tx: Tx, ctx: EngineContext, step: MoveStepRow, resultText: string | null, row: ToolRow, spec: MoveSpec) {
  fenced(yield* tx.setMoveStep(ctx.ownership.self, step.moveId, step.idx, "done", resultText, null, ctx.ownership.leaseMs));
  if (step.op === "undo") yield* tx.unmarkApplied(row.id);
  else yield* tx.markApplied(row.id, spec.sessionId, resultText, ctx.now());
}

function* failStepUnit(tx: Tx, ctx: EngineContext, step: MoveStepRow, cause: unknown) {
  const error = JSON.stringify({ message: errorText(cause) });
  fenced(yield* tx.setMoveStep(ctx.ownership.self, step.moveId, step.idx, "failed", null, error, ctx.ownership.leaseMs));
}

function* startStepUnit(tx: Tx, ctx: EngineContext, step: MoveStepRow) {
  fenced(yield* tx.setMoveStep(ctx.ownership.self, step.moveId, step.idx, "running", null, null, ctx.ownership.leaseMs));
  return (yield* tx.getTool(step.entryId))!;
}

/**
 * On stores whose owners hold leases, renews this move's lease every third of it for as long as this thread runs the
 * move: between steps, while a slow handler runs, while it finishes (each journal update renews it too). A renewal
 * that finds the move taken over stops renewing: the next journal update is then refused (`MOVE_TAKEN_OVER`).
 */
function holdMoveLease(ctx: EngineContext, sessionId: string, moveId: string): HeldLease {
  return holdLease(ctx, sessionId, `move ${moveId}`, (tx, leaseMs) => tx.renewMove(moveId, ctx.ownership.self, leaseMs));
}
