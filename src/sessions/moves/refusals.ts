// Refusals of a move, or of a call, before anything moves: tools not registered, irreversible calls, and another
// handle's, process's or server's move or tool call under way on the session.
import { ConflictError, DatabaseError } from "../../models/errors.js";
import type { MoveOptions } from "../../models/inputs.js";
import type { ToolInvocation } from "../../models/types.js";
import type { CallOwnerRow, Step, Tx } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { callMayRun, moveMayRun, type OwnerRow } from "../core/ownership.js";

/**
 * Refuses a move before anything moves: one that must undo or replay calls whose tool is not registered here (unless
 * told to leave them), or one that passes irreversible calls when told to refuse those.
 */
export function refuseMove(
  plan: { readonly unregistered: readonly ToolInvocation[]; readonly skipped: readonly ToolInvocation[] },
  o: MoveOptions,
): void {
  const calls = (list: readonly ToolInvocation[]) => list.map((t) => `${t.tool} ${t.id}`).join(", ");
  if (plan.unregistered.length > 0 && o.unregistered !== "leave") {
    const tools = [...new Set(plan.unregistered.map((t) => JSON.stringify(t.tool)))].join(", ");
    throw new ConflictError(
      `the move must undo or replay ${plan.unregistered.length} call(s) of tool(s) not registered here with an undo: ${tools} ` +
        `(${calls(plan.unregistered)}); register them in openForkpoint({ tools }), or pass { unregistered: "leave" } to leave those calls as they are`,
      "TOOL_NOT_REGISTERED",
    );
  }
  if (o.refuseIrreversible && plan.skipped.length > 0) {
    // A skipped call not applied here (a clone's or an import's, never run in this database) is one it cannot replay.
    const kept = plan.skipped.filter((t) => t.applied);
    const unreplayed = plan.skipped.filter((t) => !t.applied);
    const parts = [
      ...(kept.length > 0
        ? [`${kept.length} tool call(s) it cannot undo, irreversible or applied before a kept irreversible one (${calls(kept)})`]
        : []),
      ...(unreplayed.length > 0
        ? [`${unreplayed.length} tool call(s) it cannot replay, never applied in this database (${calls(unreplayed)})`]
        : []),
    ];
    throw new ConflictError(`the move passes or leaves ${parts.join(" and ")}, and refuseIrreversible is set`, "IRREVERSIBLE");
  }
}

/**
 * Another process (or handle) is moving this session's world, or died doing it: moving it again now could compensate
 * twice, and a tool call journaled now would land on the branch being left, outside the move's plan.
 */
export function* refuseConcurrentMove(ctx: EngineContext, tx: Tx, sessionId: string): Step<void> {
  refuseMoves(ctx, yield* tx.runningMoves(sessionId));
}

/**
 * Refusals that this thread can lift itself: every move in the way runs nowhere, being its own (a unit of it failed, as
 * on a lost connection) or one whose owner is gone (a process that died while this one served the same session; on a
 * shared database, a server whose lease ran out), so resuming it now (`resumingOwnMoves`, as recovery does) compensates
 * nothing twice: recovery claims it in a transaction, and a stalled owner that comes back is fenced out.
 */
const resumable = new WeakSet<Error>();

/** Whether `error` refused a call only for this thread's own interrupted moves (see `resumable`). */
export const isResumableRefusal = (error: unknown): boolean => error instanceof Error && resumable.has(error);

/**
 * `MOVE_IN_PROGRESS` (resumable: see `isResumableRefusal`) while a move of the session is unfinished and runs nowhere,
 * as after its process was killed or lost its database midway. A move that may still run (another handle, process or
 * server) is not in the way: what is written meanwhile comes before its end, as if written before it began.
 */
export function* refuseStoppedMoves(ctx: EngineContext, tx: Tx, sessionId: string): Step<void> {
  const running = yield* tx.runningMoves(sessionId);
  if (running.some((m) => moveMayRun(ctx.ownership, m))) return;
  refuseMoves(ctx, running);
}

/**
 * `MOVE_IN_PROGRESS` while any move of the session is unfinished, running or not (resumable when none may run): for a
 * call that would otherwise answer from what the session's moves left so far (undo and redo find nothing to take back).
 */
export function* refuseUnfinishedMoves(ctx: EngineContext, tx: Tx, sessionId: string): Step<void> {
  refuseMoves(ctx, yield* tx.runningMoves(sessionId));
}

function refuseMoves(ctx: EngineContext, running: readonly (OwnerRow & { id: string })[]): void {
  if (running.length === 0) return;
  const own = running.every((m) => !moveMayRun(ctx.ownership, m));
  const error = new ConflictError(
    `a move of this session is under way (${running.map((m) => `${m.id}, process ${m.pid}`).join("; ")}); ` +
      "try again when it ends, or call fp.recover() if it stopped midway (its process died, or lost its database)",
    "MOVE_IN_PROGRESS",
  );
  if (own) resumable.add(error);
  // This handle is closing (it cut its own move short: see `close`): a call queued behind it is refused as a closed
  // handle's, whether that move's handler still runs here or not.
  if (ctx.closing.aborted)
    throw new DatabaseError("CLOSED", "the forkpoint database was closed while this call waited for a move of its session", {
      cause: error,
    });
  throw error;
}

/**
 * A tool call of this session is running in another process or server (or another handle of this process) that may
 * still run it: moving the world under it would undo older calls while it runs and leave its effect applied off the
 * lineage. This handle's own calls are waited for instead (the session lock). A call whose owner is gone (a dead
 * process, a lease run out) is what a move reports as `unknown`.
 */
export function* refuseLiveCalls(ctx: EngineContext, tx: Tx, sessionId: string): Step<void> {
  refuseCalls(ctx, yield* tx.callOwners(sessionId));
}

/**
 * `refuseLiveCalls` counting only the calls of other processes and servers: this process's own on the directory are
 * waited for (its run turn), or made from inside the caller's handler. `why`: what such a call puts in the way.
 */
export function* refuseCallsElsewhere(ctx: EngineContext, tx: Tx, sessionId: string, why: string): Step<void> {
  const { pid, pidStart } = ctx.ownership.self;
  refuseCalls(
    ctx,
    (yield* tx.callOwners(sessionId)).filter((c) => !(c.pid === pid && c.pidStart === pidStart)),
    why,
  );
}

function refuseCalls(ctx: EngineContext, owners: readonly CallOwnerRow[], why = ""): void {
  const live = owners.filter((c) => callMayRun(ctx.ownership, c));
  if (live.length === 0) return;
  throw new ConflictError(
    `a tool call of this session is running (${live.map((c) => `${JSON.stringify(c.tool)} ${c.entryId}, process ${c.pid}`).join("; ")})${why}; ` +
      "try again when it ends",
    "CALL_IN_PROGRESS",
  );
}

/** Both refusals above from one read of the session's activity (one round trip on a network store). */
export function* refuseActivity(ctx: EngineContext, tx: Tx, sessionId: string): Step<void> {
  const { moves, calls } = yield* tx.activity(sessionId);
  refuseMoves(ctx, moves);
  refuseCalls(ctx, calls);
}
