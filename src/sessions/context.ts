// What every engine operation needs: the store, limits, tools, policies, the event emitter and a clock.
import type { EventEmitter } from "node:events";
import type { Limits } from "../models/limits.js";
import type { Store } from "../store/store.js";
import type { ToolRegistry } from "../tools/registry.js";

export interface AutoCheckpointSettings {
  everyMessages?: number;
  afterToolCalls?: boolean;
}

export interface EngineContext {
  store: Store;
  limits: Limits;
  tools: ToolRegistry;
  autoCheckpoint: AutoCheckpointSettings;
  events: EventEmitter;
  /** Milliseconds since the epoch (fractional: µs resolution); strictly increasing within a process. */
  now(): number;
  /**
   * Per-session coordination within this process: moves take the session exclusively; tool calls share it,
   * so a move never starts while a call is running and no call starts while a move is running.
   */
  withSessionLock<T>(sessionId: string, fn: () => Promise<T>, mode?: "exclusive" | "shared"): Promise<T>;
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
}

/** A per-key readers-writer lock (keys are forgotten when idle). */
export function keyedLock(): <T>(key: string, fn: () => Promise<T>, mode?: "exclusive" | "shared") => Promise<T> {
  const locks = new Map<string, ReadersWriterLock>();
  return async <T>(key: string, fn: () => Promise<T>, mode: "exclusive" | "shared" = "exclusive"): Promise<T> => {
    let lock = locks.get(key);
    if (!lock) locks.set(key, (lock = new ReadersWriterLock()));
    lock.holders++;
    try {
      if (mode === "shared") {
        // Started at once when no exclusive holder runs or waits, so that calls start in the order they were made.
        const run = lock.exclusive === 0 ? fn() : lock.tail.then(fn);
        const settled = run.catch(() => undefined);
        lock.shared.add(settled);
        try {
          return await run;
        } finally {
          lock.shared.delete(settled);
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
