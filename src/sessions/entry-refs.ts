// Entry ids an adapter keeps in a message's metadata: a copy under new ids (clone, handoff) points them at its own entries.
import type { JsonObject } from "../models/json.js";

/**
 * The message metadata key naming, by entry id, the message this one is a later form of (`forkpoint/ai`'s `saveChat`:
 * an answer that grew across requests is stored again, whole, and read as one with the forms before it).
 */
export const CONTINUES_KEY = "continues";

/** The metadata keys whose value is an entry id of the same session. */
const ENTRY_REF_KEYS = [CONTINUES_KEY] as const;

/**
 * `metadata` with each entry id it names (`ENTRY_REF_KEYS`) replaced by `to(id)`; an id `to` does not know (an entry
 * the copy does not hold) is kept. The same object when it names none.
 */
export function remapEntryRefs<M extends JsonObject | null>(metadata: M, to: (id: string) => string | undefined): M {
  if (metadata === null) return metadata;
  let out: JsonObject | null = null;
  for (const key of ENTRY_REF_KEYS) {
    const old = metadata[key];
    const id = typeof old === "string" ? to(old) : undefined;
    if (id !== undefined && id !== old) (out ??= { ...metadata })[key] = id;
  }
  return (out ?? metadata) as M;
}

/** `remapEntryRefs` for metadata stored as JSON text, as an entry row holds it. */
export function remapEntryRefsText(metadata: string | null, to: (id: string) => string | undefined): string | null {
  if (metadata === null || !ENTRY_REF_KEYS.some((key) => metadata.includes(`"${key}"`))) return metadata;
  const parsed: unknown = JSON.parse(metadata);
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return metadata;
  const out = remapEntryRefs(parsed as JsonObject, to);
  return out === parsed ? metadata : JSON.stringify(out);
}
