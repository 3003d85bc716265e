// What every engine operation needs: the store, limits, tools, policies, the event emitter and a clock.
import type { EventEmitter } from "node:events";
import type { Limits } from "../../models/limits.js";
import type { ForkpointLogger } from "../../models/logger.js";
import type { Store } from "../../store/port/index.js";
import { reentrantCall, servedHandler } from "../../tools/handler-scope.js";
import type { ToolRegistry } from "../../tools/registry.js";
import type { StateSchema } from "./state-schema.js";
import type { MoveOwnership } from "./ownership.js";

export interface AutoCheckpointSettings {
  everyMessages?: number;
  afterToolCalls?: boolean;
}

export interface EngineContext {
  store: Store;
  /** Who owns the moves this process journals, and when another owner's may be taken over. */
  ownership: MoveOwnership;
  limits: Limits;
  /** The state version new states are written under and the migrations older ones are read through (default: 1, none). */
  stateSchema?: StateSchema;
  tools: ToolRegistry;
  autoCheckpoint: AutoCheckpointSettings;
  events: EventEmitter;
  /** `openForkpoint`'s logger: for what no call can throw. */
  logger: Required<ForkpointLogger>;
  /** Milliseconds since the epoch (fractional: µs resolution); strictly increasing within a process. */
  now(): number;
  /**
   * Per-session coordination within this process: moves take the session exclusively; tool calls share it,
   * so a move never starts while a call is running and no call starts while a move is running. Made from inside a
   * tool handler of the same session, a call that would wait for that handler is refused (`REENTRANT_CALL`, naming
   * `call`); a tool call from inside a call's `run` joins the running call.
   */
  withSessionLock<T>(sessionId: string, fn: () => Promise<T>, mode?: "exclusive" | "shared", call?: string): Promise<T>;
  /** Aborted when the forkpoint closes: tool handlers' signals follow it, and no new handler starts. */
  closing: AbortSignal;
  /** Registers an operation that runs tool handlers: closing waits for it to record how its handlers ended. */
  track<T>(operation: Promise<T>): Promise<T>;
}

/** The closing signal and the operations a close waits for (see `EngineContext.closing` and `track`). */
export function engineLifecycle(): Pick<EngineContext, "closing" | "track"> & { shutdown(reason: unknown): Promise<void> } {
  const controller = new AbortController();
  const running = new Set<Promise<unknown>>();
  return {
    closing: controller.signal,
    track<T>(operation: Promise<T>): Promise<T> {
      const settled = operation.then(
        () => undefined,
        () => undefined,
      );
      running.add(settled);
      void settled.then(() => running.delete(settled));
      return operation;
    },
    /** Aborts every handler's signal, then waits until the operations running them have recorded the outcome. */
    async shutdown(reason: unknown): Promise<void> {
      if (!controller.signal.aborted) controller.abort(reason);
      while (running.size > 0) await Promise.all(running);
    },
  };
}

/** A session as the engine addresses it: its id and the user every call is scoped to. */
export interface SessionRef {
  id: string;
  userId: string;
}

/**
 * Milliseconds since the epoch with microsecond resolution, strictly increasing within the process, so
 * that events of one millisecond keep their order in the timeline. It drifts from the wall clock by at most
 * 1 µs per call made within the same microsecond.
 */
export function monotonicClock(): () => number {
  let last = 0;
  return () => {
    const now = Math.round((performance.timeOrigin + performance.now()) * 1000) / 1000;
    last = now > last ? now : Math.round((last + 0.001) * 1000) / 1000;
    return last;
  };
}

/** One key's readers-writer lock: exclusive holders run alone, in order; shared holders run together between them. */
class ReadersWriterLock {
  /** Resolves when the last queued exclusive holder is done. */
  tail: Promise<void> = Promise.resolve();
  readonly shared = new Set<Promise<unknown>>();
  holders = 0;
  /** Exclusive holders running or queued: while there are none, a shared holder starts at once. */
  exclusive = 0;
  /** Shared holders started from inside a running call's handler (not queued): an exclusive holder waits for them too. */
  readonly joined = new Set<Promise<unknown>>();
}

/**
 * A per-key readers-writer lock (keys are forgotten when idle). A key is a session id where tool handlers are
 * concerned: from inside a handler of that session, an exclusive request (or any request, inside a move's handler)
 * would wait for the handler that awaits it, so it is refused at once; a shared one inside a call's handler joins it.
 */
export function keyedLock(): <T>(key: string, fn: () => Promise<T>, mode?: "exclusive" | "shared", call?: string) => Promise<T> {
  const locks = new Map<string, ReadersWriterLock>();
  return async <T>(key: string, fn: () => Promise<T>, mode: "exclusive" | "shared" = "exclusive", call?: string): Promise<T> => {
    const handler = servedHandler(key);
    const joins = handler?.mode === "call" && mode === "shared";
    if (handler && !joins) throw reentrantCall(call ?? (mode === "shared" ? "a tool call" : "a move or deleteSession"), key, handler);
    let lock = locks.get(key);
    if (!lock) locks.set(key, (lock = new ReadersWriterLock()));
    lock.holders++;
    try {
      if (mode === "shared") {
        // Started at once when no exclusive holder runs or waits, so that calls start in the order they were made; a
        // call's handler's own call starts at once even then (a move queued meanwhile waits for the handler, which waits for it).
        const run = lock.exclusive === 0 || joins ? fn() : lock.tail.then(fn);
        const settled = run.catch(() => undefined);
        lock.shared.add(settled);
        if (joins) lock.joined.add(settled);
        try {
          return await run;
        } finally {
          lock.shared.delete(settled);
          lock.joined.delete(settled);
        }
      }
      // Wait for the exclusive holder before us and for the shared holders already started (not later ones:
      // they queue behind us).
      // Alone on this key (the usual case): nothing to wait for.
      const before = lock.holders === 1 ? null : [lock.tail, ...lock.shared];
      let release!: () => void;
      lock.tail = new Promise<void>((resolve) => (release = resolve));
      lock.exclusive++;
      try {
        if (before) await Promise.all(before);
        // Calls a handler of a call we waited for started without queueing (it may not have awaited them).
        while (lock.joined.size > 0) await Promise.all(lock.joined);
        return await fn();
      } finally {
        lock.exclusive--;
        release();
      }
    } finally {
      if (--lock.holders === 0) locks.delete(key);
    }
  };
}
