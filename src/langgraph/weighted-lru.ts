// A bounded map for the saver's per-thread caches, the least recently used out first.
// Entries weigh what they hold (messages, items, or 1), and past the bound the least recently used go first, never the
// one just set.

export class WeightedLru<V> {
  /** Each value with its weight when set (counted once: the total cannot drift), least recently used first. */
  readonly #entries = new Map<string, { value: V; weight: number }>();
  #total = 0;

  /** `maxWeight`: how much all entries together may weigh. */
  constructor(readonly maxWeight: number) {}

  /** The value, without renewing it. */
  peek(key: string): V | undefined {
    return this.#entries.get(key)?.value;
  }

  /** The value, now the most recently used. */
  get(key: string): V | undefined {
    const kept = this.#entries.get(key);
    if (!kept) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, kept);
    return kept.value;
  }

  delete(key: string): void {
    const kept = this.#entries.get(key);
    if (!kept) return;
    this.#entries.delete(key);
    this.#total -= kept.weight;
  }

  /** Keeps `value` as the most recently used; evicts the least recently used others past the bound. */
  set(key: string, value: V, weight: number): void {
    this.delete(key);
    this.#entries.set(key, { value, weight });
    this.#total += weight;
    for (const k of this.#entries.keys()) {
      if (this.#total <= this.maxWeight || k === key) break;
      this.delete(k);
    }
  }

  /** The keys and values, least recently used first. */
  *entries(): Generator<[string, V]> {
    for (const [k, e] of this.#entries) yield [k, e.value];
  }
}
