// recordToolCall: a call some framework already ran, recorded so a move can undo it.
import type { Tx } from "../store/port/index.js";
import { parseOptions, recordToolCallInput, type RecordToolCallInput } from "../models/inputs.js";
import { toJsonText } from "../models/json.js";
import type { ToolInvocation } from "../models/types.js";
import { completeCall, emitCompleted, journalCall } from "./calls/journal.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession } from "./core/owned.js";

export async function recordToolCall(ctx: EngineContext, ref: SessionRef, input: RecordToolCallInput): Promise<ToolInvocation> {
  const o = parseOptions(recordToolCallInput, input, "call");
  const argsText = toJsonText(o.args, "args", ctx.limits);
  const resultText = o.error === undefined ? toJsonText(o.result === undefined ? null : o.result, "result", ctx.limits) : null;
  const error =
    o.error === undefined ? null : toJsonText(typeof o.error === "string" ? { message: o.error } : o.error, "error", ctx.limits);
  const completed = await ctx.withSessionLock(
    ref.id,
    () => ctx.store.write({ sessionId: ref.id }, (tx) => recordToolCallUnit(tx, ref, ctx, o, argsText, resultText, error)),
    "shared",
    "recordToolCall",
  );
  // A call run elsewhere changed files forkpoint never saw before and after: they stay drift until a checkpoint.
  return emitCompleted(ctx, completed);
}

function* recordToolCallUnit(
  tx: Tx,
  ref: SessionRef,
  ctx: EngineContext,
  o: RecordToolCallInput,
  argsText: string,
  resultText: string | null,
  error: string | null,
) {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  // Reversible when recorded with a registered undo; unknown when the tool is not registered here.
  const known = ctx.tools.find(o.tool);
  const entry = yield* journalCall(ctx, tx, session, o.tool, argsText, o.callId ?? null, known ? typeof known.undo === "function" : null);
  return yield* completeCall(ctx, tx, session, entry, { result: resultText, error });
}
