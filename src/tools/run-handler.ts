// Calls a tool handler with its AbortSignal, and stops waiting for it on its time limit or when forkpoint closes.
import { DatabaseError, ToolTimeoutError } from "../models/errors.js";
import type { ToolDefinition } from "./define-tool.js";
import { serveHandler } from "./handler-scope.js";

export interface HandlerCall {
  tool: ToolDefinition;
  step: "run" | "undo" | "replay";
  sessionId: string;
  invocationId: string;
  /** "call" for `invoke`'s run (the session held shared), "move" for a move's undo or replay (held exclusively). */
  mode: "call" | "move";
  /** What a move is doing, for error messages ("rollback", "edit", "switch"). */
  during?: string;
  /** Aborted when the forkpoint closes. */
  closing: AbortSignal;
  /** Told of the handler's work when the close stops the wait for it (it may go on: see `abandonedAtClose`). */
  abandoned?: (work: Promise<unknown>) => void;
}

/**
 * Runs `handler(signal)` and settles with it, unless its signal aborts first (the tool's `timeoutMs` elapsed, or the
 * forkpoint closed): then it rejects with the abort's reason at once, whether or not the handler heeds the signal,
 * and whatever the handler does later is ignored. Closed, that reason is `closing.reason` (see `abandonedAtClose`).
 * Rejects before calling the handler when forkpoint is already closing, with another error: that handler never ran.
 */
export async function runHandler<T>(call: HandlerCall, handler: (signal: AbortSignal) => Promise<T> | T): Promise<T> {
  if (call.closing.aborted) throw closedBeforeStart(`the ${call.step} handler of tool ${JSON.stringify(call.tool.name)}`);
  const controller = new AbortController();
  const { signal } = controller;
  const onClose = () => controller.abort(call.closing.reason);
  call.closing.addEventListener("abort", onClose, { once: true });
  const timeoutMs = call.tool.timeoutMs;
  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(() => controller.abort(new ToolTimeoutError(call.tool.name, call.invocationId, call.step, timeoutMs)), timeoutMs);
  const aborted = new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));
  const served = {
    mode: call.mode,
    description: `the ${call.step} handler of tool ${JSON.stringify(call.tool.name)} (invocation ${call.invocationId})${call.during ? ` during a ${call.during}` : ""}`,
    live: true,
  };
  // A synchronous throw becomes a rejection; the handler runs in a context that knows which session it serves.
  const work = serveHandler(call.sessionId, served, () => new Promise<T>((resolve) => resolve(handler(signal))));
  // The loser of the race must not surface as an unhandled rejection.
  work.catch(() => undefined);
  aborted.catch(() => undefined);
  try {
    return await Promise.race([work, aborted]);
  } catch (error) {
    if (abandonedAtClose(call.closing, error)) call.abandoned?.(work.then(noop, noop));
    throw error;
  } finally {
    served.live = false;
    if (timer) clearTimeout(timer);
    call.closing.removeEventListener("abort", onClose);
  }
}

/** The errors that say a handler never started: forkpoint was closing first (see `notStartedAtClose`). */
const notStarted = new WeakSet<object>();

/** The error of a handler (or a move's step) that does not start because forkpoint is closing: it never ran. */
export function closedBeforeStart(what: string): DatabaseError {
  const error = new DatabaseError("CLOSED", `the forkpoint database was closed before ${what} started`);
  notStarted.add(error);
  return error;
}

/** Whether `error` says forkpoint closed before the handler started: nothing of it ran, as before a crash there. */
export function notStartedAtClose(error: unknown): boolean {
  return typeof error === "object" && error !== null && notStarted.has(error);
}

/**
 * Whether `error` says forkpoint closed while the handler ran (not before it started): the engine stopped waiting, but
 * the handler may go on and finish, so its outcome is unknown, as if the process had died there.
 */
export function abandonedAtClose(closing: AbortSignal, error: unknown): boolean {
  return closing.aborted && error === closing.reason;
}

const noop = (): void => undefined;
