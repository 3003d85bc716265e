// recordToolCall: a call some framework already ran, recorded so a move can undo it.
import type { Step, Tx } from "../store/port/index.js";
import { parseOptions, recordToolCallInput, type RecordToolCallInput, type ToolCallOptions } from "../models/inputs.js";
import { toJsonText, type JsonValue } from "../models/json.js";
import type { ToolInvocation } from "../models/types.js";
import { completeCall, emitCompleted, journalCall } from "./calls/journal.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { checkIfAt, type IfAt } from "./core/if-at.js";
import { afterLanding } from "./core/landing-writes.js";
import { ownedSession } from "./core/owned.js";
import { toToolInvocation } from "./core/rows.js";
import { recordFilesNamed } from "./workspace/named-files.js";
import { applyOnce, jsonArgument, recordRequest, requestOf, callControlOf, type AnswerCodec, type Request } from "./requests/ledger.js";

/**
 * A recorded call as the request ledger keeps it: its invocation's id, read back for a retry, and whether it was applied
 * then (a move may have undone it since: the retry answers as the first call did). A bare id: recorded before that.
 */
const invocationAnswer: AnswerCodec<ToolInvocation> = {
  encode: (invocation) => JSON.stringify([invocation.id, invocation.applied]),
  *decode(tx, answer): Step<ToolInvocation> {
    const kept = JSON.parse(answer) as string | [string, boolean];
    const invocation = toToolInvocation((yield* tx.getTool(typeof kept === "string" ? kept : kept[0]))!);
    return typeof kept === "string" ? invocation : { ...invocation, applied: kept[1] };
  },
};

export async function recordToolCall(
  ctx: EngineContext,
  ref: SessionRef,
  input: RecordToolCallInput,
  options?: ToolCallOptions,
): Promise<ToolInvocation> {
  const o = parseOptions(recordToolCallInput, input, "call");
  const argsText = toJsonText(o.args, "args", ctx.limits);
  const resultText = o.error === undefined ? toJsonText(o.result === undefined ? null : o.result, "result", ctx.limits) : null;
  const error =
    o.error === undefined ? null : toJsonText(typeof o.error === "string" ? { message: o.error } : o.error, "error", ctx.limits);
  const { requestId, ifAt, after } = callControlOf(options);
  const request = requestOf(
    requestId,
    "recordToolCall",
    requestId === undefined
      ? null
      : {
          tool: o.tool,
          args: jsonArgument(argsText),
          result: jsonArgument(resultText),
          error: jsonArgument(error),
          callId: o.callId ?? null,
          // Only when given, so that an id recorded before `after` was kept answers a retry without it.
          ...(after === undefined ? {} : { after }),
        },
    invocationAnswer,
  );
  // Recorded once the session's writes still landing have landed (a LangGraph put of the input this call answers).
  return afterLanding(ctx, ref.id, () =>
    applyOnce(ctx, ref, request, async () => {
      const { completed, workspace } = await ctx.withSessionLock(
        ref.id,
        () =>
          ctx.store.write({ sessionId: ref.id }, (tx) =>
            recordToolCallUnit(tx, ref, ctx, o, argsText, resultText, error, request, ifAt, after),
          ),
        "shared",
        "recordToolCall",
      );
      // A call run elsewhere changed files forkpoint never saw before and after: they stay drift until a checkpoint.
      // What they hold where its arguments name is kept: a move undoing or replaying it refuses a change made there since.
      // Read after its unit (a call made next, not awaited, lands after it), before it answers (a move then finds it).
      if (workspace) await recordFilesNamed(ctx, ref.id, completed.invocation.id, o.args as JsonValue);
      return emitCompleted(ctx, completed);
    }),
  );
}

function* recordToolCallUnit(
  tx: Tx,
  ref: SessionRef,
  ctx: EngineContext,
  o: RecordToolCallInput,
  argsText: string,
  resultText: string | null,
  error: string | null,
  request: Request<ToolInvocation> | undefined,
  ifAt: IfAt | undefined,
  after: string | undefined,
) {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  yield* checkIfAt(tx, session, ifAt);
  // Reversible when recorded with a registered undo; unknown when the tool is not registered here.
  const known = ctx.tools.find(o.tool);
  const entry = yield* journalCall(
    ctx,
    tx,
    session,
    o.tool,
    argsText,
    o.callId ?? null,
    known ? typeof known.undo === "function" : null,
    after,
  );
  const completed = yield* completeCall(ctx, tx, session, entry, { result: resultText, error });
  // A call no rollback can undo stays applied: its id too.
  yield* recordRequest(ctx, tx, session.id, request, completed.invocation, typeof known?.undo !== "function");
  return { completed, workspace: session.hasWorkspace };
}
