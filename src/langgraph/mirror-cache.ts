// What a ForkpointSaver remembers of the messages channel it last stored or read for each thread.
// The very item objects and their field values, so that the next put (LangGraph hands back the same objects, plus the
// new ones) serializes only the new items. Bounded; the least recently used threads go first.
import { WeightedLru } from "./weighted-lru.js";

/** The lineage point a thread's branch is at, and the items of the messages channel mirrored up to it. */
export interface Mirror {
  headHash: string;
  /** The LangGraph checkpoint the saver last wrote or read at that point: a put from it goes on from the mirror. */
  checkpointId: string;
  /** The saver's own copy (LangGraph's array may be pushed to in place, which must read as new items); grown in place. */
  items: unknown[];
  /** Each item's field values, nested ones too, when it was stored (`fieldsOf`), to notice a change made in place. */
  fields: unknown[][];
}

/** What the cache keeps of a list: the items and their field values (without where they are). */
export type MirrorItems = Pick<Mirror, "items" | "fields">;

/** Ends a nested object's or array's values in a field list, so that its shape is compared too. */
const END = Symbol("end of a nested value");
/** How deep nested plain objects and arrays are followed; deeper values are compared by identity only. */
const MAX_DEPTH = 8;

/** Plain objects and arrays: what a node may change inside a message (its content blocks, tool calls, metadata). */
function isNested(value: unknown): value is Record<string, unknown> | unknown[] {
  if (typeof value !== "object" || value === null) return false;
  if (Array.isArray(value)) return true;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

function pushValue(v: unknown, out: unknown[], depth: number): void {
  out.push(v);
  if (depth < MAX_DEPTH && isNested(v)) pushFields(v, out, depth + 1);
}

function pushFields(o: Record<string, unknown> | unknown[], out: unknown[], depth: number): void {
  if (Array.isArray(o)) for (let j = 0; j < o.length; j++) pushValue(o[j], out, depth);
  else for (const k in o) pushValue(o[k], out, depth);
  out.push(END);
}

/** Whether `v` is `stored[i]` (and its nested values the ones after it); the index after them, or -1. */
function matchValue(v: unknown, stored: unknown[], i: number, depth: number): number {
  if (stored[i] !== v) return -1;
  return depth < MAX_DEPTH && isNested(v) ? matchFields(v, stored, i + 1, depth + 1) : i + 1;
}

/** Whether `o`'s fields are `stored` from index `i` on (as `pushFields` wrote them); the index after them, or -1. */
function matchFields(o: Record<string, unknown> | unknown[], stored: unknown[], i: number, depth: number): number {
  if (Array.isArray(o)) {
    for (let j = 0; j < o.length && i >= 0; j++) i = matchValue(o[j], stored, i, depth);
  } else {
    for (const k in o) if ((i = matchValue(o[k], stored, i, depth)) < 0) return -1;
  }
  return i >= 0 && stored[i] === END ? i + 1 : -1;
}

/**
 * An item's field values, and those of the plain objects and arrays inside it (a LangChain message's `lc_kwargs`,
 * content blocks, tool calls), in order, each nested one closed by a marker. Comparing them by identity notices a
 * node that changes a stored message in place (`m.content = redact(m.content)`, `block.text = …`) for the cost of a
 * pointer walk, not a serialization. A key renamed to hold the same value, or a change inside a class instance that
 * is not a plain object (a Date, a Map), is not noticed.
 */
export function fieldsOf(item: unknown): unknown[] {
  if (typeof item !== "object" || item === null) return [item];
  const out: unknown[] = [];
  pushFields(item as Record<string, unknown>, out, 1);
  return out;
}

/** Whether `item`'s fields are still `stored` (`fieldsOf(item)` then), compared without building the list again. */
function sameFields(item: unknown, stored: unknown[]): boolean {
  if (typeof item !== "object" || item === null) return stored.length === 1 && stored[0] === item;
  return matchFields(item as Record<string, unknown>, stored, 0, 1) === stored.length;
}

/** A copy of `items` with their field values, as the cache keeps them. */
export function mirrorOf(items: readonly unknown[]): MirrorItems {
  const own = items.slice();
  return { items: own, fields: own.map(fieldsOf) };
}

/** Whether `items` begins with the mirrored items, the same objects with the same field values. */
export function extendsMirror(mirror: MirrorItems, items: readonly unknown[]): boolean {
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
