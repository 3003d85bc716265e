// LangChain objects (messages) rebuilt without LangChain's `load()`. Reading a thread back means reviving every stored
// message, and `load()` costs about 25 µs a message (it resolves the class and its field aliases each time); calling
// the class's constructor again with a private copy of the arguments it was built with costs about 2 µs and gives a
// fresh object, as `load()` does. A rebuild is kept for a stored text only when what it builds serializes back to
// exactly that text; anything else is revived by the serializer as before.
import type { JsonValue } from "../models/json.js";
import { canonicalJson } from "../sessions/integrity.js";

/** How to build one stored item again: its class, and a private copy of its constructor arguments. */
export interface Revival {
  ctor: new (kwargs: unknown) => unknown;
  kwargs: unknown;
}

/** A fresh object equal to the one the revival was taken from (its arguments are copied again: callers may mutate it). */
export function revive(r: Revival): unknown {
  return new r.ctor(structuredClone(r.kwargs));
}

/**
 * The revival of `item`, which the serializer just revived from `text` and nobody has touched yet, or null when it
 * has none: not a LangChain serializable (no `lc_kwargs`), arguments that cannot be copied, or a rebuild that does not
 * serialize (`serialize`, the saver's own) to `text`'s value.
 */
export async function revivalOf(item: unknown, text: string, serialize: (item: unknown) => Promise<JsonValue>): Promise<Revival | null> {
  if (typeof item !== "object" || item === null) return null;
  const ctor = (item as { constructor?: unknown }).constructor;
  const kwargs = (item as { lc_kwargs?: unknown }).lc_kwargs;
  if (typeof ctor !== "function" || ctor === Object || typeof kwargs !== "object" || kwargs === null) return null;
  try {
    const revival: Revival = { ctor: ctor as Revival["ctor"], kwargs: structuredClone(kwargs) };
    return canonicalJson(await serialize(revive(revival))) === canonicalJson(JSON.parse(text)) ? revival : null;
  } catch {
    return null;
  }
}
