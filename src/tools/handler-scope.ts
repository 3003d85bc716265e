// Which sessions the current async context serves a tool handler for, so a call that would wait on itself is refused.
import { AsyncLocalStorage } from "node:async_hooks";
import { ConflictError } from "../models/errors.js";

/** A handler being awaited: a tool call's `run` ("call", the session held shared) or a move's undo/replay ("move", held exclusively). */
export interface ServedHandler {
  mode: "call" | "move";
  /** Names it in errors, e.g. `the undo handler of tool "write_file" (invocation tc_1) during a rollback`. */
  description: string;
  /** False once the engine stopped waiting for it (it returned, threw or timed out): later calls are ordinary ones. */
  live: boolean;
}

const scope = new AsyncLocalStorage<ReadonlyMap<string, ServedHandler>>();

/** Runs `fn` (a handler) in a context that records it serves `handler` for `sessionId`; what it starts inherits that. */
export function serveHandler<T>(sessionId: string, handler: ServedHandler, fn: () => T): T {
  const outer = scope.getStore();
  const inner = new Map(outer);
  inner.set(sessionId, handler);
  return scope.run(inner, fn);
}

const NO_HANDLER: ReadonlyMap<string, ServedHandler> = new Map();

/**
 * Runs `fn` as code that serves no handler: an event listener, which is not the handler whose call emitted the
 * event and which nothing awaits, so its calls queue as anyone's would instead of being refused.
 */
export function outsideHandlers<T>(fn: () => T): T {
  return scope.getStore() === undefined ? fn() : scope.run(NO_HANDLER, fn);
}

/** The handler the current context serves for `sessionId`, while the engine still waits for it. */
export function servedHandler(sessionId: string): ServedHandler | undefined {
  const handler = scope.getStore()?.get(sessionId);
  return handler?.live ? handler : undefined;
}

/** True when the current context is inside any handler the engine still waits for. */
export function insideHandler(): boolean {
  const held = scope.getStore();
  if (!held) return false;
  for (const handler of held.values()) if (handler.live) return true;
  return false;
}

/** The refusal of `call` on `sessionId` made from inside `handler`: it would wait for the handler that waits for it. */
export function reentrantCall(call: string, sessionId: string, handler: ServedHandler): ConflictError {
  const why =
    handler.mode === "move"
      ? "the move waits for this handler, and a session being moved takes no call until the move ends"
      : "a move waits for running tool calls, and this call waits for the move, so it would wait on itself";
  return new ConflictError(
    `${call} on session ${JSON.stringify(sessionId)} was made from inside ${handler.description} on that session: ${why}`,
    "REENTRANT_CALL",
  );
}

/**
 * Refuses any call on a session from inside one of its move's undo/replay handlers: the session is between two
 * positions then (its branch still the one being left, its world part-moved), so no call on it has a clear meaning.
 */
export function refuseInsideMove(sessionId: string, call = "a call"): void {
  const handler = servedHandler(sessionId);
  if (handler?.mode === "move") throw reentrantCall(call, sessionId, handler);
}
