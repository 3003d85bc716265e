// A bounded wait for something another handle, process or server is doing on a session (a call, a move): pauses that
// double up to half a second, until a deadline.
import { setTimeout as sleep } from "node:timers/promises";

/** The longest pause (ms): what ends elsewhere is seen within half a second of ending. */
const MAX_PAUSE_MS = 500;

/**
 * The pauses of one wait, on the monotonic clock (`performance.now()`): `first` ms, doubling up to half a second, while
 * the next pause still ends by `deadline`. The caller tries, and asks `spent` before each pause.
 */
export class Backoff {
  #pause: number;
  readonly #deadline: number;

  /** A wait that ends at `deadline` (a `performance.now()` time). */
  constructor(deadline: number, first = 10) {
    this.#deadline = deadline;
    this.#pause = first;
  }

  /** A wait of `waitMs` from now. */
  static for(waitMs: number, first?: number): Backoff {
    return new Backoff(performance.now() + waitMs, first);
  }

  /** True when the next pause would end past the deadline: the caller gives up. */
  get spent(): boolean {
    return performance.now() + this.#pause > this.#deadline;
  }

  /** Waits the next pause; the one after is twice as long (at most half a second). */
  async pause(): Promise<void> {
    await sleep(this.#pause);
    this.grow();
  }

  /** The next pause twice as long without waiting (a try that went around at once still counts as one). */
  grow(): void {
    this.#pause = Math.min(this.#pause * 2, MAX_PAUSE_MS);
  }

  /** Waits the next pause and returns true, or returns false at once when it would end past the deadline. */
  async wait(): Promise<boolean> {
    if (this.spent) return false;
    await this.pause();
    return true;
  }
}
