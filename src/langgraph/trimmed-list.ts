// Whether a put's messages list trims the stored one (drops messages, appends after what it keeps) rather than edits it.
import type { JsonValue } from "../models/json.js";
import { canonicalJson } from "../sessions/langgraph-bridge.js";

/** LangGraph's serializer writes an `undefined` field as this marker, and drops the field when it stores a whole list. */
const isUndefinedMarker = (v: JsonValue): boolean =>
  typeof v === "object" && v !== null && !Array.isArray(v) && v.lc === 2 && v.type === "undefined" && Object.keys(v).length === 2;

function withoutUndefined(v: JsonValue): JsonValue {
  if (Array.isArray(v)) return v.map(withoutUndefined);
  if (typeof v !== "object" || v === null) return v;
  const out: Record<string, JsonValue> = {};
  for (const [k, x] of Object.entries(v)) if (!isUndefinedMarker(x)) out[k] = withoutUndefined(x);
  return out;
}

/**
 * A serialized message as a trim compares it: its canonical JSON without `undefined` fields (a message LangGraph read
 * back from a list stored as a value has lost them, and is the same message).
 */
export const trimKey = (item: JsonValue): string => canonicalJson(withoutUndefined(item));

/** A serialized message's own id (a LangChain message's `kwargs.id`, a plain one's `id`), if it has one. */
function messageId(item: JsonValue): string | undefined {
  if (typeof item !== "object" || item === null || Array.isArray(item)) return undefined;
  const kwargs = item.kwargs;
  const id = typeof kwargs === "object" && kwargs !== null && !Array.isArray(kwargs) ? kwargs.id : item.id;
  return typeof id === "string" ? id : undefined;
}

/** How many items at the front of `list` keep messages of `old` in their order, and the index in `old` after the last. */
function keptInOrder(old: readonly JsonValue[], list: readonly JsonValue[]): { kept: number; next: number } {
  const oldKeys = old.map(trimKey);
  let next = 0;
  let kept = 0;
  for (; kept < list.length; kept++) {
    const key = trimKey(list[kept]!);
    let at = next;
    while (at < old.length && oldKeys[at] !== key) at++;
    if (at === old.length) break;
    next = at + 1;
  }
  return { kept, next };
}

/**
 * How many items at the front of `list` keep messages of `old` in their order, when the rest are new ones appended
 * after the last of `old`: a trim (LangGraph's `RemoveMessage`, a node keeping the last N messages) that changes and
 * inserts nothing before what it keeps. A list that keeps none is one when each of its items has an id that none of
 * `old` has (LangGraph's `add_messages` replaces a message in place only by its id: a new id is a new message). -1
 * when the list is no such trim.
 */
export function keptByTrim(old: readonly JsonValue[], list: readonly JsonValue[]): number {
  const { kept, next } = keptInOrder(old, list);
  if (kept === list.length) return kept;
  if (kept > 0) return next === old.length ? kept : -1;
  const oldIds = new Set(old.map(messageId));
  return list.every((item) => messageId(item) !== undefined && !oldIds.has(messageId(item))) ? 0 : -1;
}

/**
 * Where a list that is no trim (`keptByTrim` -1) departs from `old`: `at`, the index in `old` of the message it edits,
 * and `from`, the index in `list` of the first item that differs. The first differing item replaces the stored
 * message whose id it carries (`add_messages` replaces by id: an edit in place of a message a trimmed list still
 * holds), else the one right after the last kept message. A trimmed list starts later than the stored one, so the
 * departure is never the stored list's first message merely because the list's first item is not it.
 */
export function departure(old: readonly JsonValue[], list: readonly JsonValue[]): { at: number; from: number } {
  const { kept, next } = keptInOrder(old, list);
  const id = kept < list.length ? messageId(list[kept]!) : undefined;
  let at = next;
  if (id !== undefined) {
    const byId = old.findIndex((m, i) => i >= next && messageId(m) === id);
    if (byId >= 0) at = byId;
  }
  return { at: Math.min(at, old.length - 1), from: kept };
}
