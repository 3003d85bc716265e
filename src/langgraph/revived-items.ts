// LangChain objects (messages) rebuilt without LangChain's `load()`: a stored item revived fast, as a fresh object.
// Reading a thread back means reviving every stored message, and `load()` costs about 25 µs a message (it resolves the
// class and its field aliases each time); calling the class's constructor again with the arguments it was built with,
// parsed from their JSON text, costs about 1 µs and gives a fresh object, as `load()` does. A rebuild is kept for a
// stored text only when what it builds serializes back to exactly that text; anything else is revived by the serializer
// as before.
import { assertJson, type JsonValue } from "../models/json.js";
import { DEFAULT_LIMITS } from "../models/limits.js";
import { canonicalJson } from "../sessions/langgraph-bridge.js";

/** How to build one stored item again: its class, and the JSON text of the arguments it was built with. */
export interface Revival {
  ctor: new (kwargs: unknown) => unknown;
  kwargs: string;
}

/** A fresh object equal to the one the revival was taken from (its arguments parsed again: callers may mutate it). */
export function revive(r: Revival): unknown {
  return new r.ctor(JSON.parse(r.kwargs));
}

/**
 * The revival of `item`, which the serializer just revived from `text` and nobody has touched yet, or null when it
 * has none: not a LangChain serializable (no `lc_kwargs`), arguments that are not plain JSON (a nested object the
 * serializer revived into a class instance, which a copy would turn into a plain one), or a rebuild that does not
 * serialize (`serialize`, the saver's own) to `text`'s value.
 */
export async function revivalOf(item: unknown, text: string, serialize: (item: unknown) => Promise<JsonValue>): Promise<Revival | null> {
  if (typeof item !== "object" || item === null) return null;
  const ctor = (item as { constructor?: unknown }).constructor;
  const kwargs = (item as { lc_kwargs?: unknown }).lc_kwargs;
  if (typeof ctor !== "function" || ctor === Object || typeof kwargs !== "object" || kwargs === null) return null;
  try {
    assertJson(kwargs, "kwargs", DEFAULT_LIMITS);
    const revival: Revival = { ctor: ctor as Revival["ctor"], kwargs: JSON.stringify(kwargs) };
    return canonicalJson(await serialize(revive(revival))) === canonicalJson(JSON.parse(text)) ? revival : null;
  } catch {
    return null;
  }
}
