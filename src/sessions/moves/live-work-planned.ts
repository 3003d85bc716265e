// What a plan says of the work another thread of the session does now: a tool call another process or server runs
// refuses the move until it ends (`CALL_IN_PROGRESS`, see refusals.ts), and so does a move under way that may still run
// (`MOVE_IN_PROGRESS`): the plan says so in `blocked`, and does not count
// such calls `unknown` (a call a crash left running, whose owner is gone). A move that stopped midway and runs nowhere
// is finished by the next move first: `plan` finishes it too (`finishStoppedMoves`), so it plans from where the move
// will start; one it could not finish (its tools are not here, or a read-only handle) is said in `blocked`.
import type { MovePlan } from "../../models/types.js";
import type { CallOwnerRow, MoveRow, Step, Tx } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { callMayRun, moveMayRun } from "../core/ownership.js";
import { recoverMoves } from "./recovery.js";

/** The session's calls a live owner elsewhere runs, and its moves that may still run anywhere. */
export interface LiveWork {
  calls: CallOwnerRow[];
  moves: MoveRow[];
  /** Unfinished moves that run nowhere (their owner died or lost its database): the move finishes them first. */
  stopped: MoveRow[];
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
  const running = yield* tx.runningMoves(sessionId);
  const moves = running.filter((m) => moveMayRun(ctx.ownership, m));
  return { calls, moves, stopped: running.filter((m) => !moves.includes(m)) };
}

/** `plan` as the move would meet that work. */
export function withLiveWork<P extends MovePlan>(ctx: EngineContext, plan: P, { calls, moves, stopped }: LiveWork): P {
  const why: string[] = [];
  if (stopped.length > 0) {
    const ids = stopped.map((m) => `${m.id}, process ${m.pid}`).join("; ");
    why.push(
      `a move of this session stopped midway and runs nowhere (${ids}); the move finishes it first, which changes what ` +
        `this plan is of, and it could not be finished here (${ctx.readonly ? "a read-only handle" : "see fp.recover()"}): ` +
        "plan again once it is finished",
    );
  }
  if (moves.length > 0) {
    const running = moves.map((m) => `${m.id}, process ${m.pid}`).join("; ");
    why.push(
      `a move of this session is under way (${running}): the move is refused (MOVE_IN_PROGRESS) until it ends; plan ` +
        "again once it has ended (it changes what this plan is of)",
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

/**
 * Finishes the session's moves that stopped midway and run nowhere, as the next move would before its own steps
 * (recovery claims each once: none is run twice): the plan is then of the session as that move finds it. Nothing on a
 * read-only handle, and nothing when none stopped (one read); what could not be finished stays for `withLiveWork`.
 */
export async function finishStoppedMoves(ctx: EngineContext, sessionId: string): Promise<void> {
  if (ctx.readonly) return;
  const { stopped } = await ctx.store.read((tx) => liveWork(ctx, tx, sessionId));
  if (stopped.length === 0) return;
  await recoverMoves(ctx, { sessionId });
}
