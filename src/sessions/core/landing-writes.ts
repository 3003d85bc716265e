// Writes still landing, by key, that later calls must follow: a LangGraph saver's puts and pending writes, which
// LangGraph issues without waiting for them while the step's nodes already run (and so make their tool calls).
import { setImmediate as turn } from "node:timers/promises";
import { servedHandler } from "../../tools/handler-scope.js";

/**
 * How many times a wait looks again after what it waited for has landed: LangGraph issues a thread's next put only
 * once the one before it has landed, so one more may have started meanwhile. Bounded, so that a thread another run
 * keeps writing to never starves a call.
 */
const MAX_ROUNDS = 8;

/** The writes of each key still landing. */
export class LandingWrites {
  readonly #byKey = new Map<string, Set<Promise<unknown>>>();

  /** Tracks `write` under `key` until it settles; returns it. */
  add<T>(key: string, write: Promise<T>): Promise<T> {
    let set = this.#byKey.get(key);
    if (!set) this.#byKey.set(key, (set = new Set()));
    set.add(write);
    const done = (): void => {
      set.delete(write);
      if (set.size === 0 && this.#byKey.get(key) === set) this.#byKey.delete(key);
    };
    write.then(done, done);
    return write;
  }

  /**
   * Null when nothing of `key` is landing (the usual case: nothing to wait for, not even a turn). Else settles once
   * those writes have landed or failed (their failures are their callers'), and those that started meanwhile.
   */
  settled(key: string): Promise<void> | null {
    if (!this.#byKey.has(key)) return null;
    return (async () => {
      for (let round = 0; round < MAX_ROUNDS; round++) {
        const set = this.#byKey.get(key);
        if (!set) return;
        await Promise.allSettled([...set]);
        // The turn in which LangGraph, seeing a put land, issues the next one.
        await turn();
      }
    })();
  }
}

/**
 * `run` once the session's writes still landing have landed: at once when none is, or from inside a handler of the
 * session (its own call joins it; a landing put may be waiting for that very handler, as a fork waits for calls).
 */
export function afterLanding<T>(ctx: { landing: LandingWrites }, sessionId: string, run: () => Promise<T>): Promise<T> {
  const waiting = servedHandler(sessionId) ? null : ctx.landing.settled(sessionId);
  return waiting ? waiting.then(run) : run();
}
