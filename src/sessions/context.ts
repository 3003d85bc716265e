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
  /** Serializes world moves per session within this process. */
  withSessionLock<T>(sessionId: string, fn: () => Promise<T>): Promise<T>;
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

/** A per-key async mutex. */
export function keyedLock(): <T>(key: string, fn: () => Promise<T>) => Promise<T> {
  const tails = new Map<string, Promise<unknown>>();
  return async <T>(key: string, fn: () => Promise<T>): Promise<T> => {
    const previous = tails.get(key) ?? Promise.resolve();
    const run = previous.then(fn, fn);
    const tail = run.catch(() => undefined);
    tails.set(key, tail);
    try {
      return await run;
    } finally {
      if (tails.get(key) === tail) tails.delete(key);
    }
  };
}
