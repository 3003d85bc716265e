// Writes on a session's current branch come after its unfinished moves, never onto the branch such a move is leaving.
import { ConflictError, DatabaseError } from "../../models/errors.js";
import type { Step, Tx } from "../../store/port/index.js";
import { insideHandler, servedHandler } from "../../tools/handler-scope.js";
import { Backoff } from "../core/backoff.js";
import type { EngineContext, SessionRef } from "../core/context.js";
import { ownedCurrent } from "../core/owned.js";
import { behind, cascades, orderedWrite } from "../core/call-order.js";
import { enqueueWrite, queuedWrites, type WriteQueue } from "../core/write-queue.js";
import { isResumableRefusal, refuseConcurrentMove, refuseStoppedMoves } from "../moves/refusals.js";
import { recoverMoves } from "../moves/recovery.js";

/** Refusals of `currentToWrite` and `currentToServe`: `afterMoves` finishes or waits for the move they name. */
const unfinished = new WeakSet<object>();
/** Why finishing a stopped move for a write failed (its undo failed again, its tools are not here). */
const ending = new WeakSet<object>();

/**
 * `ownedCurrent` for a unit that writes on the current branch: refused `MOVE_IN_PROGRESS` while a move of the session
 * is unfinished, whose end makes another branch current (what is written now would leave the conversation then). The
 * session's read says whether one is in the same statement: a session with none pays no other read.
 */
export function* currentToWrite(ctx: EngineContext, tx: Tx, sessionId: string, userId: string) {
  const current = yield* ownedCurrent(tx, sessionId, userId);
  if (current.session.moving === true) yield* refuseUnfinished(ctx, tx, sessionId, true);
  return current;
}

/**
 * `ownedCurrent` for a read that a write will follow (what an adapter serves a run): refused only while a move of the
 * session stopped midway and runs nowhere, which the write would finish first. A move running elsewhere ends by itself:
 * the write that follows waits for it.
 */
export function* currentToServe(ctx: EngineContext, tx: Tx, sessionId: string, userId: string) {
  const current = yield* ownedCurrent(tx, sessionId, userId);
  if (current.session.moving === true) yield* refuseUnfinished(ctx, tx, sessionId, false);
  return current;
}

function* refuseUnfinished(ctx: EngineContext, tx: Tx, sessionId: string, running: boolean): Step<void> {
  try {
    yield* (running ? refuseConcurrentMove : refuseStoppedMoves)(ctx, tx, sessionId);
  } catch (error) {
    unfinished.add(error as object);
    throw error;
  }
}

/**
 * Runs `unit` (reading `currentToWrite` or `currentToServe`) after the session's unfinished moves. One that runs
 * nowhere (this thread's own, stopped midway, or one whose owner is gone) is resumed first, as a tool call's is (its
 * failure is the call's); one running elsewhere (another handle, process or server, or another writer finishing a
 * stopped one) is waited for, up to `busyTimeoutMs` from when the write was made. Refused when neither ends it:
 * `TOOL_NOT_REGISTERED` for a stopped move whose tools are not registered here, else `MOVE_IN_PROGRESS` (the wait ran
 * out). Never waits inside a tool handler: its own move may be the one in the way. Ordered with the handle's other
 * calls on the session (see call-order.ts) unless `ordered` is false (a write inside a call already ordered).
 */
export function afterMoves<T>(ctx: EngineContext, ref: Pick<SessionRef, "id">, unit: () => Promise<T>, ordered = true): Promise<T> {
  const made = performance.now();
  // A handler's own write joins its call, which is under way: it never waits for calls made after that one.
  if (!ordered || servedHandler(ref.id)) return landing(ctx, ref, unit, made);
  return orderedWrite(ctx.events, ref.id, () => landing(ctx, ref, unit, made));
}

/**
 * `afterMoves` for a read (`currentToServe`): it changes nothing, so the calls made after it need not wait for it (a
 * step's parallel tool calls each read where their loop stands).
 */
export function servedAfterMoves<T>(ctx: EngineContext, ref: Pick<SessionRef, "id">, read: () => Promise<T>): Promise<T> {
  return landing(ctx, ref, read, performance.now());
}

function landing<T>(ctx: EngineContext, ref: Pick<SessionRef, "id">, unit: () => Promise<T>, made: number): Promise<T> {
  const deadline = made + ctx.busyWaitMs;
  // Behind this handle's writes already waiting on the session: they were made first.
  if (queuedWrites(ctx.events, ref.id) !== undefined) {
    return enqueueWrite(ctx.events, ref.id, (queue) =>
      queue.refusal !== undefined
        ? Promise.reject(behind(queue.refusal))
        : unit().catch((error: unknown) => waited(ctx, ref.id, unit, error, deadline, queue)),
    );
  }
  // The usual call's own promise: no extra step on the way when no move is in it.
  return unit().catch((error: unknown) => {
    if (!isUnfinished(error) || insideHandler()) throw error;
    return enqueueWrite(ctx.events, ref.id, (queue) => waited(ctx, ref.id, unit, error, deadline, queue));
  });
}

const isUnfinished = (error: unknown): boolean => typeof error === "object" && error !== null && unfinished.has(error);

/** `resumeOrWait` for a queued write: refused there, the writes queued behind it are refused too. */
function waited<T>(ctx: EngineContext, sessionId: string, unit: () => Promise<T>, error: unknown, deadline: number, queue: WriteQueue) {
  if (!isUnfinished(error) || insideHandler()) return Promise.reject(error);
  if (ctx.closing.aborted) return Promise.reject(closedWhileWaiting(error));
  return resumeOrWait(ctx, sessionId, unit, error, deadline).catch((refusal: unknown) => {
    if (isUnfinished(refusal) || (typeof refusal === "object" && refusal !== null && ending.has(refusal))) {
      queue.refusal ??= refusal;
      cascades(refusal);
    }
    throw refusal;
  });
}

async function resumeOrWait<T>(
  ctx: EngineContext,
  sessionId: string,
  unit: () => Promise<T>,
  error: unknown,
  deadline: number,
): Promise<T> {
  let recovered = false;
  const backoff = new Backoff(deadline);
  for (;;) {
    if (!isUnfinished(error) || insideHandler()) throw error;
    if (ctx.closing.aborted) throw closedWhileWaiting(error);
    if (isResumableRefusal(error)) {
      // Still stopped after a recovery that resumed nothing: it cannot be finished here.
      if (recovered) throw error;
      recovered = true;
      const report = await recoverMoves(ctx, { sessionId });
      if (report.failed.length > 0) throw marked(report.failed[0]!.error);
      const missing = report.waiting.find((w) => w.reason.includes("TOOL_NOT_REGISTERED"));
      // Why it cannot be finished here is what the caller can act on, not that a dead process began it.
      if (missing && report.resumed.length === 0)
        throw marked(
          new ConflictError(
            `a move of this session stopped midway (${missing.moveId}) and is finished before anything is written, but not here: ` +
              `${missing.reason}; register them in openForkpoint({ tools })`,
            "TOOL_NOT_REGISTERED",
          ),
        );
      // Tried again at once, yet counted as a pause.
      backoff.grow();
    } else if (!(await backoff.wait())) throw error;
    try {
      return await unit();
    } catch (again) {
      error = again;
    }
  }
}

/**
 * A write waiting for a move when the handle closes: the move is left as a crash would leave it (see `close`), and the
 * write is refused as any call of a closed handle is, never as a move in progress it could wait out and try again.
 */
function closedWhileWaiting(refusal: unknown): DatabaseError {
  return new DatabaseError("CLOSED", "the forkpoint database was closed while this call waited for a move of its session to end", {
    cause: refusal,
  });
}

function marked<E extends object>(error: E): E {
  ending.add(error);
  return error;
}
