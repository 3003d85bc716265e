// The running side of a long operator call: abort checks, yielding to the event loop between chunks of work (the
// database calls are synchronous, so a timer's abort lands only there), and progress reported at a bounded rate.
import { setImmediate as nextTurn } from "node:timers/promises";
import { AbortedError } from "../../models/errors.js";
import type { LongCallOptions } from "../../models/progress.js";
import { runSync, type Body, type Step, type Tx } from "../../store/port/index.js";

/** Units of work done between two yields to the event loop (one read or write transaction each, where chunked). */
export const CHUNK_UNITS = 1000;

export class LongCall {
  readonly #signal: AbortSignal | undefined;
  readonly #onProgress: LongCallOptions["onProgress"];
  #total = 0;
  #done = 0;
  #reported = -1;
  #step = 1;

  /** Throws `AbortedError` at once when the signal is already aborted. */
  constructor(options: LongCallOptions) {
    this.#signal = options.signal;
    this.#onProgress = options.onProgress;
    this.check();
  }

  /** Throws `AbortedError` when the signal has been aborted. */
  check(): void {
    if (this.#signal?.aborted) throw new AbortedError(this.#signal.reason);
  }

  /**
   * Fixes the number of units (counted before the work starts) and reports `{ done: 0, total }`. With nothing to
   * count, that report is also the last one (`done === total`): `finish` makes it, once the work is over.
   */
  start(total: number): void {
    this.#total = total;
    // About every 1%: at most ~100 calls whatever the size.
    this.#step = Math.max(1, Math.ceil(total / 100));
    if (total > 0) this.#report(0);
  }

  /** Counts `n` units done (never past `total`); reports when another ~1% is done, never the last one (`finish` does). */
  advance(n: number): void {
    this.#done = Math.min(this.#total, this.#done + n);
    if (this.#done < this.#total && this.#done - this.#reported >= this.#step) this.#report(this.#done);
  }

  /** Lets timers and I/O run (an abort among them), then checks the signal. Call between chunks, outside transactions. */
  async pause(): Promise<void> {
    await nextTurn();
    this.check();
  }

  /** Reports `done === total`: the call's work is over (and, for writes, committed). */
  finish(): void {
    this.#done = this.#total;
    if (this.#reported !== this.#total) this.#report(this.#total);
  }

  #report(done: number): void {
    this.#reported = done;
    this.#onProgress?.({ done, total: this.#total });
  }
}

/** A piece of a long call's work, run inside the chunk's transaction; `units` is what it counts for (0 for a check). */
export interface Slice {
  units: number;
  /** A check of the database reads through `tx` (a generator); a check of a document alone returns nothing. */
  run: (tx: Tx) => Step<void> | void;
}

/** A handle for slices that check no database (an import's document): any use of it is a bug. */
const NO_STORE = new Proxy({} as Tx, {
  get(_, name) {
    throw new Error(`a slice without a store used tx.${String(name)}`);
  },
});

/** Runs a chunk of slices that need no database. */
export async function withoutStore(body: Body<void>): Promise<void> {
  runSync(body(NO_STORE));
}

/**
 * Runs `slices` in chunks of about `CHUNK_UNITS` units, each chunk as one `unit` (a read transaction, or a plain call),
 * yielding to the event loop and checking the signal between chunks. Progress is reported after each chunk.
 */
export async function runSlices(call: LongCall, slices: Iterable<Slice>, unit: (body: Body<void>) => Promise<void>): Promise<void> {
  const it = slices[Symbol.iterator]();
  let next = it.next();
  while (!next.done) {
    let used = 0;
    await unit(function* (tx) {
      while (!next.done && (used === 0 || used + next.value.units <= CHUNK_UNITS)) {
        const step = next.value.run(tx);
        if (step) yield* step;
        used += next.value.units;
        next = it.next();
      }
    });
    call.advance(used);
    if (!next.done) await call.pause();
  }
}
