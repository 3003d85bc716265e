// resolveToolCall: an operator records what became of a tool call a crash left running (reported `unknown`).
import { ConflictError, NotFoundError } from "../models/errors.js";
import { parseInput, resolveToolCallInput, type ResolveToolCallInput } from "../models/inputs.js";
import { toJsonText } from "../models/json.js";
import type { ToolInvocation } from "../models/types.js";
import type { SessionRow, Step, Tx } from "../store/port/index.js";
import { completeCall, emitCompleted, type Completed } from "./calls/journal.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession } from "./core/owned.js";
import { toToolInvocation } from "./core/rows.js";
import { refuseConcurrentMove } from "./moves/move.js";
import { callMayRun } from "./moves/ownership.js";

/** The call's completion as it is stored: a result (succeeded) or an error (failed), as JSON text. */
type Outcome = { result: string; error: null } | { result: null; error: string };

/**
 * Completes a call a crash left `running` with what the operator found out: `succeeded` (with its result; its effect
 * joins the world's applied set, so later moves undo it as any other, given that result) or `failed` (never undone).
 * The completion is the call's one write-once record, as if the call had ended. Refused with `ConflictError`
 * `CALL_NOT_UNKNOWN` for a call that has an outcome, `CALL_IN_PROGRESS` for one whose owner (a process, a server's
 * lease) may still run it, and `MOVE_IN_PROGRESS` while a move of the session is under way.
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
  return emitCompleted(ctx, completed);
}

function* resolveUnit(ctx: EngineContext, tx: Tx, ref: SessionRef, invocationId: string, outcome: Outcome): Step<Completed> {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  const row = yield* tx.getTool(invocationId);
  if (!row || (yield* tx.getBranch(row.branchId))?.sessionId !== session.id) throw new NotFoundError("tool", invocationId);
  const call = toToolInvocation(row);
  if (call.status !== "running")
    throw new ConflictError(
      `tool call ${invocationId} (${JSON.stringify(call.tool)}) ${call.status}: only a call a crash left running (of unknown outcome) is resolved`,
      "CALL_NOT_UNKNOWN",
    );
  yield* refuseLiveOwner(ctx, tx, session, invocationId, call.tool);
  yield* refuseConcurrentMove(ctx, tx, session.id);
  yield* tx.deleteCallOwner(invocationId);
  return yield* completeCall(ctx, tx, session, row, outcome);
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
