// invoke: run a registered tool, journaled first, completed once, its effect marked applied.
import { invokeOptions, parseOptions, type InvokeOptions, type ToolCallOptions } from "../models/inputs.js";
import { readingInput, toJsonText, type JsonInput } from "../models/json.js";
import { journalRunComplete, type CallOptions } from "./calls/journal.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { afterLanding } from "./core/landing-writes.js";
import { callControlOf } from "./requests/ledger.js";

export async function invoke(
  ctx: EngineContext,
  ref: SessionRef,
  name: string,
  args: JsonInput,
  call: CallOptions = {},
  options?: ToolCallOptions,
): Promise<unknown> {
  const tool = ctx.tools.get(name);
  const argsText = toJsonText(args, "args", ctx.limits);
  const control = options === undefined ? call : { ...call, ...callControlOf(options) };
  // Shared with other calls, exclusive of moves: the world is never moved under a running tool. Journaled once the
  // session's writes still landing have landed (a LangGraph put of the input this call answers).
  return ctx.track(
    afterLanding(ctx, ref.id, () =>
      ctx.withSessionLock(ref.id, () => journalRunComplete(ctx, ref, tool, argsText, control), "shared", `invoke(${JSON.stringify(name)})`),
    ),
  );
}

/**
 * `invoke` as the public API takes it: a call id (`{ callId }`, the framework's id of the call) is the call's own
 * field, not a write option, so it is checked here and passed as the adapters pass theirs.
 */
export function invokeVerb(ctx: EngineContext, ref: SessionRef, name: string, args: JsonInput, options?: InvokeOptions): Promise<unknown> {
  const withCallId = readingInput(() => typeof options === "object" && options !== null && "callId" in options, "options");
  if (!withCallId) return invoke(ctx, ref, name, args, {}, options);
  const { callId, ...rest } = parseOptions(invokeOptions, options, "options");
  return invoke(ctx, ref, name, args, { callId: callId ?? null }, rest);
}
