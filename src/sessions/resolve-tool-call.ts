// resolveToolCall: an operator records what became of a tool call, or of its undo or replay, a crash left running
// (reported `unknown`).
import { ConflictError, NotFoundError } from "../models/errors.js";
import { parseInput, resolveToolCallInput, type ResolveToolCallInput } from "../models/inputs.js";
import { toJsonText } from "../models/json.js";
import type { ToolInvocation } from "../models/types.js";
import type { MoveStepRow, SessionRow, Step, Tx } from "../store/port/index.js";
import { completeCall, emitCompleted, type Completed } from "./calls/journal.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession } from "./core/owned.js";
import { toToolInvocation } from "./core/rows.js";
import { refuseConcurrentMove } from "./moves/refusals.js";
import { settleSnapshots } from "./workspace/unapplied.js";
import { callMayRun } from "./core/ownership.js";

/** The call's completion as it is stored: a result (succeeded) or an error (failed), as JSON text. */
type Outcome = { result: string; error: null } | { result: null; error: string };

/**
 * Completes a call a crash left `running` with what the operator found out: `succeeded` (with its result; its effect
 * joins the world's applied set, so later moves undo it as any other, given that result) or `failed` (never undone).
 * A clone's or an import's copy of such a call is only recorded: its effect is the source's, never applied here.
 * The completion is the call's one write-once record, as if the call had ended. Refused with `ConflictError`
 * `CALL_NOT_UNKNOWN` for a call that has an outcome, `CALL_IN_PROGRESS` for one whose owner (a process, a server's
 * lease) may still run it, and `MOVE_IN_PROGRESS` while a move of the session is under way.
 * A call whose undo or replay a crash interrupted (a move reported it `unknown`) is resolved the same way, the outcome
 * being that undo's or replay's: `succeeded` (an undo finished: the call is no longer applied; a replay finished, with
 * its result: applied again) or `failed` (it changed nothing: the call stays as it was before that step).
 */
export async function resolveToolCall(
  ctx: EngineContext,
  ref: SessionRef,
  invocationId: string,
  input: ResolveToolCallInput,
): Promise<ToolInvocation> {
  const o = parseInput(resolveToolCallInput, input, "outcome");
  const outcome: Outcome =
    o.status === "succeeded"
      ? { result: toJsonText(o.result === undefined ? null : o.result, "outcome.result", ctx.limits), error: null }
      : { result: null, error: toJsonText(typeof o.error === "string" ? { message: o.error } : o.error, "outcome.error", ctx.limits) };
  // Exclusive of moves and calls in this process: the applied set it may change is what they read.
  const completed = await ctx.withSessionLock(
    ref.id,
    () => ctx.store.write({ sessionId: ref.id }, (tx) => resolveUnit(ctx, tx, ref, invocationId, outcome)),
    "exclusive",
    "resolveToolCall",
  );
  if ("completion" in completed) return emitCompleted(ctx, completed.completion);
  // A resolved step is the undo or replay it was (no call completed): its event when it finished after all.
  if (completed.finished) ctx.events.emit(completed.finished, completed.invocation);
  return completed.invocation;
}

/** A call completed, or the undo or replay of a completed call resolved (`finished`: the step, when it did). */
type Resolved = { completion: Completed } | { invocation: ToolInvocation; finished: "undo" | "replay" | null };

function* resolveUnit(ctx: EngineContext, tx: Tx, ref: SessionRef, invocationId: string, outcome: Outcome): Step<Resolved> {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  const row = yield* tx.getTool(invocationId);
  if (!row || (yield* tx.getBranch(row.branchId))?.sessionId !== session.id) throw new NotFoundError("tool call", invocationId);
  const call = toToolInvocation(row);
  if (call.status !== "running") {
    const steps = yield* tx.unknownSteps(session.id, invocationId);
    if (steps.length > 0) return yield* resolveStepsUnit(ctx, tx, session, steps, outcome);
    throw new ConflictError(
      `tool call ${invocationId} (${JSON.stringify(call.tool)}) ${call.status}: only a call a crash left running (of unknown outcome) is resolved`,
      "CALL_NOT_UNKNOWN",
    );
  }
  yield* refuseLiveOwner(ctx, tx, session, invocationId, call.tool);
  yield* refuseConcurrentMove(ctx, tx, session.id);
  yield* tx.deleteCallOwner(invocationId);
  const completion = yield* completeCall(ctx, tx, session, row, outcome);
  // A clone's or an import's copy ran in another world: its outcome is history here, never an effect to undo.
  if (completion.invocation.applied && (yield* tx.importedCalls(session.id)).has(invocationId)) {
    yield* tx.unmarkApplied(invocationId);
    completion.invocation = toToolInvocation((yield* tx.getTool(invocationId))!);
  }
  return { completion };
}

/**
 * The interrupted undo or replay of a completed call, resolved: the step records the outcome, and the applied set
 * follows it (an undo that finished unapplies the call, a replay that finished applies it with its result).
 */
function* resolveStepsUnit(
  ctx: EngineContext,
  tx: Tx,
  session: SessionRow,
  steps: readonly MoveStepRow[],
  outcome: Outcome,
): Step<Resolved> {
  yield* refuseConcurrentMove(ctx, tx, session.id);
  const done = outcome.error === null;
  for (const step of steps) {
    const result = done && step.op === "replay" ? outcome.result : null;
    yield* tx.resolveUnknownStep(step.moveId, step.idx, done ? "done" : "failed", result, outcome.error);
  }
  const last = steps[steps.length - 1]!;
  if (done && last.op === "undo") yield* tx.unmarkApplied(last.entryId);
  if (done && last.op === "replay") {
    // A replay that finished after all is an application with its result, kept past prune as any replay's.
    yield* tx.markApplied(last.entryId, session.id, outcome.result, ctx.now());
    yield* tx.keepReplayResult(last.entryId, session.id, outcome.result, ctx.now());
  }
  const row = (yield* tx.getTool(last.entryId))!;
  // Snapshots read meanwhile hold what the crash left: the call's effect when its undo changed nothing, or its replay
  // ran (that application).
  const application = done && last.op === "replay" ? (row.appliedSeq ?? undefined) : undefined;
  yield* settleSnapshots(tx, session.id, last.entryId, done === (last.op === "replay"), application);
  return { invocation: toToolInvocation(row), finished: done ? last.op : null };
}

/** A call whose owner may still be running it has an outcome to come: its own. */
function* refuseLiveOwner(ctx: EngineContext, tx: Tx, session: SessionRow, invocationId: string, tool: string): Step<void> {
  const owner = (yield* tx.callOwners(session.id)).find((c) => c.entryId === invocationId);
  if (owner && callMayRun(ctx.ownership, owner))
    throw new ConflictError(
      `tool call ${invocationId} (${JSON.stringify(tool)}) is still running (process ${owner.pid}): its outcome is its own to record`,
      "CALL_IN_PROGRESS",
    );
}
