// The puts of each thread still landing: LangGraph runs a step's nodes while the previous step's put is under way,
// so a tool that reaches the thread's session waits for them first, or its call would land before the checkpoint
// it follows and the put would read the call as a move away from the graph's position.
export class LandingPuts {
  readonly #byThread = new Map<string, Set<Promise<unknown>>>();

  /** Tracks `put` under the thread's key until it settles; returns it. */
  add<T>(key: string, put: Promise<T>): Promise<T> {
    let set = this.#byThread.get(key);
    if (!set) this.#byThread.set(key, (set = new Set()));
    set.add(put);
    const done = (): void => {
      set.delete(put);
      if (set.size === 0 && this.#byThread.get(key) === set) this.#byThread.delete(key);
    };
    put.then(done, done);
    return put;
  }

  /** Settles once every put of the thread made so far has landed or failed (their failures are their callers'). */
  async settled(key: string): Promise<void> {
    const set = this.#byThread.get(key);
    if (set) await Promise.allSettled([...set]);
  }
}
