// Stop and undo: an agent loop's wrapped tools stay on the branch their loop began on, and a move ends the loop.
import type { Tx } from "../store/port/index.js";
import { AsyncLocalStorage } from "node:async_hooks";
import type { EventEmitter } from "node:events";
import { ConflictError } from "../models/errors.js";
import type { MoveResult } from "../models/types.js";
import type { EngineContext, SessionRef } from "../sessions/core/context.js";
import { ownedSession } from "../sessions/core/owned.js";
import { sessionEngine, type SessionHandle } from "../sessions/session-handle.js";

/** One set of wrapped tools: the branch its calls must be on, and what to abort when the session moves. */
export interface LoopGuard {
  /** The session's current branch when the tools were wrapped (read once, asynchronously). */
  branch: Promise<string>;
  abortController?: AbortController;
  /**
   * What its last call carried that tells its loop from another's (the AI SDK's abort signal, the loop's first
   * message): a model's own rollback is followed only by the guards of the loop that made it.
   */
  loop: Set<object>;
  /** The loop a rollback was made by when this guard's calls did not show it as its own: its next call must be of it. */
  followed?: readonly object[];
  /** Whether it followed a move the session's own agent made: its calls then go on the move's branch, after no question. */
  selfMoved?: boolean;
}

/** Guards by engine and session; weakly held, so wrapped tools that are dropped take their guard with them. */
const guards = new WeakMap<EventEmitter, Map<string, Set<WeakRef<LoopGuard>>>>();
/**
 * A move the session's own agent is making (a checkpoint tool's rollback, a memory's pop), in the async context that
 * makes it: the move's own event is told from another tab's made meanwhile. `loop` is what tells the moving loop's
 * calls (empty: not told, every loop of the session follows).
 */
interface SelfMove {
  sessionId: string;
  loop: readonly object[];
}
const selfMoving = new AsyncLocalStorage<SelfMove>();

// Every move of the session, undo and redo included: each takes the session off the loop's branch.
const MOVES = ["rollback", "edit", "switch", "undoMove", "redoMove"] as const;

function watch(ctx: EngineContext): Map<string, Set<WeakRef<LoopGuard>>> {
  let bySession = guards.get(ctx.events);
  if (bySession) return bySession;
  const table = new Map<string, Set<WeakRef<LoopGuard>>>();
  guards.set(ctx.events, table);
  const onMove = (outcome: MoveResult) => {
    const sessionId = outcome.branch.sessionId;
    const set = table.get(sessionId);
    if (!set) return;
    const self = selfMoving.getStore();
    const own = self?.sessionId === sessionId ? self : undefined;
    const live = [...set].map((ref) => ref.deref()).filter((guard) => guard !== undefined);
    // The session's only guard is the moving loop's own (its checkpoint tools sit beside wrapped tools), maybe wrapped
    // once for many turns: a later turn, whose messages are built anew, is no other loop, and its calls go on.
    const sole = live.length === 1 ? live[0] : undefined;
    for (const ref of set) {
      const guard = ref.deref();
      if (!guard || !own) {
        set.delete(ref);
        if (guard) stop(guard, sessionId);
        continue;
      }
      guard.branch = Promise.resolve(outcome.branch.id);
      guard.selfMoved = true;
      // A guard not shown to be of the moving loop follows until its next call tells: a loop wrapped once for many
      // turns may not have called yet in the turn that rolled back, and another loop's calls are refused there.
      if (guard === sole || ofLoop(guard, own.loop)) delete guard.followed;
      else guard.followed = own.loop;
    }
    if (set.size === 0) table.delete(sessionId);
  };
  for (const event of MOVES) ctx.events.on(event, onMove);
  return table;
}

/** A guard for tools wrapped now on `s`: their calls are refused once the session is on another branch. */
export function guardLoop(s: SessionHandle, abortController?: AbortController): LoopGuard {
  const engine = sessionEngine(s);
  const guard: LoopGuard = {
    branch: engine.run((ctx, ref) => ctx.store.read((tx) => branchUnit(tx, ref))),
    ...(abortController ? { abortController } : {}),
    loop: new Set(),
  };
  // Not awaited by anyone until the first call: a session that does not exist fails that call, not an unhandled rejection.
  guard.branch.catch(() => undefined);
  const table = watch(engine.ctx);
  let set = table.get(s.id);
  if (!set) table.set(s.id, (set = new Set()));
  for (const ref of set) if (!ref.deref()) set.delete(ref);
  set.add(new WeakRef(guard));
  return guard;
}

function* branchUnit(tx: Tx, ref: SessionRef) {
  return (yield* ownedSession(tx, ref.id, ref.userId)).currentBranchId;
}

/** Whether a guard's last call (or its abort controller) shows the loop `loop` tells (empty: any loop). */
function ofLoop(guard: LoopGuard, loop: readonly object[]): boolean {
  const signal = guard.abortController?.signal;
  return loop.length === 0 || loop.some((mark) => guard.loop.has(mark) || mark === signal);
}

/** Refuses the guard's calls from now on and aborts its loop: the session moved under it. */
function stop(guard: LoopGuard, sessionId: string): void {
  const stopped = new ConflictError(`session ${JSON.stringify(sessionId)} moved: the agent loop is stopped`, "SESSION_MOVED");
  // Its calls are refused from now on, even when the branch it read at wrapping comes back after the move (a slow
  // read, as behind a pooler): that read may already name the move's branch.
  guard.branch = Promise.reject(stopped);
  guard.branch.catch(() => undefined);
  guard.abortController?.abort(stopped);
}

/**
 * The branch a call of the guard's loop must be on, the call telling its loop by `loop` (see LoopGuard.loop). A guard
 * that followed a rollback its calls did not show to be its loop's learns here whether it was: if not, the call is
 * refused and the loop stopped (SESSION_MOVED, its controller aborted), as after another tab's move.
 */
export function loopBranch(guard: LoopGuard, sessionId: string, loop: readonly object[]): Promise<string> {
  const followed = guard.followed;
  if (followed && loop.length > 0) {
    delete guard.followed;
    if (!loop.some((mark) => followed.includes(mark))) stop(guard, sessionId);
  }
  // The last call's only: a guard kept for many turns holds no earlier turn's messages.
  if (loop.length > 0) guard.loop = new Set(loop);
  return guard.branch;
}

/**
 * Runs a move the session's own agent makes (a checkpoint tool's rollback, a memory's pop): the loop that `loop` tells
 * goes on from the new branch (every loop of the session, when `loop` is empty); the others stop.
 */
export function selfMove<T>(sessionId: string, move: () => Promise<T>, loop: readonly object[] = []): Promise<T> {
  return selfMoving.run({ sessionId, loop }, move);
}

/** When a refused call means the loop should end: aborts the loop's controller with the refusal. */
export function stopLoop(guard: LoopGuard, error: unknown): void {
  if (error instanceof ConflictError && error.code === "SESSION_MOVED" && guard.abortController && !guard.abortController.signal.aborted) {
    guard.abortController.abort(error);
  }
}
