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
  /** Milliseconds since the epoch; never goes backwards within a process. */
  now(): number;
  /** Serializes world moves per session within this process. */
  withSessionLock<T>(sessionId: string, fn: () => Promise<T>): Promise<T>;
}

/** A session as the engine addresses it: its id and the user every call is scoped to. */
export interface SessionRef {
  id: string;
  userId: string;
}

/** A clock that never goes backwards (wall clocks can), so time-ordered listings stay ordered. */
export function monotonicClock(): () => number {
  let last = 0;
  return () => {
    const now = Date.now();
    last = now > last ? now : last;
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
