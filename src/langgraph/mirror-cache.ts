// What a ForkpointSaver remembers of the messages channel it last stored or read for each thread: the very item objects
// and their field values, so that the next put (LangGraph hands back the same objects, plus the new ones) serializes
// only the new items. Bounded; the least recently used threads go first.
import { WeightedLru } from "./weighted-lru.js";

/** The lineage point a thread's branch is at, and the items of the messages channel mirrored up to it. */
export interface Mirror {
  headHash: string;
  /** The saver's own copy (LangGraph's array may be pushed to in place, which must read as new items); grown in place. */
  items: unknown[];
  /** Each item's own field values when it was stored (`fieldsOf`), to notice a field reassigned in place. */
  fields: unknown[][];
}

/**
 * An item's own enumerable field values (and a LangChain message's `lc_kwargs`, which its serialization reads).
 * Comparing them by identity notices a node that reassigns a stored message's field in place
 * (`m.content = redact(m.content)`), for the cost of a pointer walk, not a serialization. A change deep inside a
 * field's own object is not noticed.
 */
export function fieldsOf(item: unknown): unknown[] {
  if (typeof item !== "object" || item === null) return [item];
  const out: unknown[] = [];
  const o = item as Record<string, unknown>;
  for (const k in o) out.push(o[k]);
  const kwargs = o.lc_kwargs as Record<string, unknown> | null | undefined;
  if (typeof kwargs === "object" && kwargs !== null) for (const k in kwargs) out.push(kwargs[k]);
  return out;
}

/** Whether `item`'s fields are still `stored` (`fieldsOf(item)` then), compared without building the list again. */
function sameFields(item: unknown, stored: unknown[]): boolean {
  if (typeof item !== "object" || item === null) return stored.length === 1 && stored[0] === item;
  let i = 0;
  const o = item as Record<string, unknown>;
  for (const k in o) if (stored[i++] !== o[k]) return false;
  const kwargs = o.lc_kwargs as Record<string, unknown> | null | undefined;
  if (typeof kwargs === "object" && kwargs !== null) for (const k in kwargs) if (stored[i++] !== kwargs[k]) return false;
  return i === stored.length;
}

/** A copy of `items` with their field values, as the cache keeps them. */
export function mirrorOf(items: readonly unknown[]): Omit<Mirror, "headHash"> {
  const own = items.slice();
  return { items: own, fields: own.map(fieldsOf) };
}

/** Whether `items` begins with the mirrored items, the same objects with the same field values. */
export function extendsMirror(mirror: Omit<Mirror, "headHash">, items: readonly unknown[]): boolean {
  const old = mirror.items;
  if (old.length > items.length) return false;
  for (let i = 0; i < old.length; i++) if (old[i] !== items[i] || !sameFields(items[i], mirror.fields[i]!)) return false;
  return true;
}

/** Each thread's mirror, weighed by its items; `get` renews it. */
export class MirrorCache extends WeightedLru<Mirror> {
  /** `maxItems`: how many items all threads together may keep (each with its field values). */
  constructor(maxItems = 200_000) {
    super(maxItems);
  }

  override set(sessionId: string, mirror: Mirror): void {
    super.set(sessionId, mirror, mirror.items.length);
  }
}
