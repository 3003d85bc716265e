// Lets the event loop turn now and then under a loop of awaited units: SQLite's units end synchronously, so a program
// awaiting one after another would otherwise run only microtasks, and its timers, I/O and HTTP requests would starve.
import { setImmediate as nextTurn } from "node:timers/promises";

/** How long units may run back to back, in ms, before the next one waits for a turn of the event loop. */
const MAX_RUN_MS = 10;

export class EventLoopTurns {
  /** Whether a turn of the event loop is awaited since `since` (a setImmediate is pending that marks it). */
  #pending = false;
  #since = 0;

  /** A promise to await before the next unit when units have run back to back for too long; else undefined. */
  due(): Promise<void> | undefined {
    const now = performance.now();
    if (!this.#pending) {
      this.#pending = true;
      this.#since = now;
      setImmediate(() => (this.#pending = false));
      return undefined;
    }
    return now - this.#since > MAX_RUN_MS ? nextTurn() : undefined;
  }
}
