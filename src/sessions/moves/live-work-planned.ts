// What a plan says of the work another thread of the session does now: a tool call another process or server runs
// refuses the move until it ends (`CALL_IN_PROGRESS`, see refusals.ts), and a move under way that may still run makes
// it wait, then refuses it (`MOVE_IN_PROGRESS`, see after-moves.ts): the plan says so in `blocked`, and does not count
// such calls `unknown` (a call a crash left running, whose owner is gone).
import type { MovePlan } from "../../models/types.js";
import type { CallOwnerRow, MoveRow, Step, Tx } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { callMayRun, moveMayRun } from "../core/ownership.js";

/** The session's calls a live owner elsewhere runs, and its moves that may still run anywhere. */
export interface LiveWork {
  calls: CallOwnerRow[];
  moves: MoveRow[];
}

/**
 * The calls of session `sessionId` a live owner elsewhere runs (this process's own are waited for by the move), and its
 * unfinished moves that may still run (a move that runs nowhere is finished first by the next move, which goes on).
 */
export function* liveWork(ctx: EngineContext, tx: Tx, sessionId: string): Step<LiveWork> {
  const { pid, pidStart } = ctx.ownership.self;
  const calls = (yield* tx.callOwners(sessionId)).filter(
    (c) => !(c.pid === pid && c.pidStart === pidStart) && callMayRun(ctx.ownership, c),
  );
  const moves = (yield* tx.runningMoves(sessionId)).filter((m) => moveMayRun(ctx.ownership, m));
  return { calls, moves };
}

/** `plan` as the move would meet that work. */
export function withLiveWork<P extends MovePlan>(ctx: EngineContext, plan: P, { calls, moves }: LiveWork): P {
  const why: string[] = [];
  if (moves.length > 0) {
    const running = moves.map((m) => `${m.id}, process ${m.pid}`).join("; ");
    why.push(
      `a move of this session is under way (${running}): the move waits up to ${ctx.busyWaitMs} ms for it to end and is ` +
        "refused (MOVE_IN_PROGRESS) if it has not; plan again once it has ended (it changes what this plan is of)",
    );
  }
  if (calls.length > 0) {
    const running = calls.map((c) => `${JSON.stringify(c.tool)} ${c.entryId}, process ${c.pid}`).join("; ");
    why.push(`a tool call of this session is running (${running}): the move is refused (CALL_IN_PROGRESS) until it ends`);
  }
  if (why.length === 0) return plan;
  const ids = new Set(calls.map((c) => c.entryId));
  const blocked = [...why, ...(plan.blocked ? [plan.blocked] : [])].join("; and ");
  return { ...plan, unknown: plan.unknown.filter((t) => !ids.has(t.id)), blocked };
}
