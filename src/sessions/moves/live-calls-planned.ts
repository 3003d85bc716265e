// What a plan says of the session's tool calls another process or server runs now: the move is refused until they end
// (`CALL_IN_PROGRESS`, see refusals.ts), so the plan says so in `blocked` and does not count them `unknown` (a call
// a crash left running, whose owner is gone).
import type { MovePlan } from "../../models/types.js";
import type { CallOwnerRow, Step, Tx } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { callMayRun } from "../core/ownership.js";

/** The calls of session `sessionId` a live owner elsewhere runs (this process's own are waited for by the move). */
export function* liveCallsElsewhere(ctx: EngineContext, tx: Tx, sessionId: string): Step<CallOwnerRow[]> {
  const { pid, pidStart } = ctx.ownership.self;
  return (yield* tx.callOwners(sessionId)).filter((c) => !(c.pid === pid && c.pidStart === pidStart) && callMayRun(ctx.ownership, c));
}

/** `plan` as the move would meet those calls. */
export function withLiveCalls<P extends MovePlan>(plan: P, live: readonly CallOwnerRow[]): P {
  if (live.length === 0) return plan;
  const running = live.map((c) => `${JSON.stringify(c.tool)} ${c.entryId}, process ${c.pid}`).join("; ");
  const why = `a tool call of this session is running (${running}): the move is refused (CALL_IN_PROGRESS) until it ends`;
  const ids = new Set(live.map((c) => c.entryId));
  return { ...plan, unknown: plan.unknown.filter((t) => !ids.has(t.id)), blocked: plan.blocked ? `${why}; and ${plan.blocked}` : why };
}
