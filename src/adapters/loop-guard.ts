// Stop and undo: an agent loop's wrapped tools stay on the branch their loop began on, and a move ends the loop.
import type { Tx } from "../store/port/index.js";
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
}

/** Guards by engine and session; weakly held, so wrapped tools that are dropped take their guard with them. */
const guards = new WeakMap<EventEmitter, Map<string, Set<WeakRef<LoopGuard>>>>();
/** Sessions whose own agent is moving them now (a checkpoint tool's rollback): their loops follow instead of stopping. */
const selfMoving = new Set<string>();

// Every move of the session, undo and redo included: each takes the session off the loop's branch.
const MOVES = ["rollback", "edit", "switch", "undoMove", "redoMove"] as const;

function watch(ctx: EngineContext): Map<string, Set<WeakRef<LoopGuard>>> {
  let bySession = guards.get(ctx.events);
  if (bySession) return bySession;
  const table = new Map<string, Set<WeakRef<LoopGuard>>>();
  guards.set(ctx.events, table);
  const onMove = (outcome: MoveResult) => {
    const set = table.get(outcome.branch.sessionId);
    if (!set) return;
    const follow = selfMoving.has(outcome.branch.sessionId);
    for (const ref of set) {
      const guard = ref.deref();
      if (!guard) continue;
      if (follow) {
        guard.branch = Promise.resolve(outcome.branch.id);
        continue;
      }
      const stopped = new ConflictError(
        `session ${JSON.stringify(outcome.branch.sessionId)} moved: the agent loop is stopped`,
        "SESSION_MOVED",
      );
      // Its calls are refused from now on, even when the branch it read at wrapping comes back after the move (a slow
      // read, as behind a pooler): that read may already name the move's branch.
      guard.branch = Promise.reject(stopped);
      guard.branch.catch(() => undefined);
      guard.abortController?.abort(stopped);
    }
    if (!follow) table.delete(outcome.branch.sessionId);
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

/** Runs a move the session's own agent makes (a checkpoint tool's rollback): its loops go on from the new branch. */
export async function selfMove<T>(sessionId: string, move: () => Promise<T>): Promise<T> {
  selfMoving.add(sessionId);
  try {
    return await move();
  } finally {
    selfMoving.delete(sessionId);
  }
}

/** When a refused call means the loop should end: aborts the loop's controller with the refusal. */
export function stopLoop(guard: LoopGuard, error: unknown): void {
  if (error instanceof ConflictError && error.code === "SESSION_MOVED" && guard.abortController && !guard.abortController.signal.aborted) {
    guard.abortController.abort(error);
  }
}
