// listCheckpoints: a user's checkpoints across sessions, filtered (by metadata too, by index), newest first, keyset-paginated.
import { ValidationError } from "../models/errors.js";
import { listCheckpointsInput, metadataFilterValue, parseInput, parseOptions, type ListCheckpointsInput } from "../models/inputs.js";
import { MAX_INDEXED_METADATA } from "../store/port/checkpoints.js";
import type { Checkpoint, Page } from "../models/types.js";
import type { EngineContext } from "./core/context.js";
import { decodeCursor } from "./core/cursor.js";
import { DEFAULT_LIMIT, page } from "./core/page.js";
import { toCheckpoint } from "./core/rows.js";

export async function listCheckpoints(ctx: EngineContext, input: ListCheckpointsInput): Promise<Page<Checkpoint>> {
  refuseInheritedKeys(input);
  const o = parseOptions(listCheckpointsInput, input, "filter");
  const limit = o.limit ?? DEFAULT_LIMIT;
  // Values as the metadata index holds them: their JSON text, which only longer values exceed.
  const metadata = Object.entries({ ...o.metadata, ...ownProtoKey(input) }).map(([key, value]): [string, string] => {
    const text = JSON.stringify(value);
    if (text.length > MAX_INDEXED_METADATA)
      throw new ValidationError(`metadata.${key}`, `must be at most ${MAX_INDEXED_METADATA} characters as JSON`);
    return [key, text];
  });
  const before = o.cursor == null ? undefined : decodeCursor("checkpoints", o.cursor)[0];
  const rows = await ctx.store.query((tx) =>
    tx.listCheckpoints({
      userId: o.userId,
      sessionId: o.sessionId,
      name: o.name,
      since: o.since?.getTime(),
      until: o.until?.getTime(),
      auto: o.auto,
      metadata,
      beforeSeq: before,
      now: ctx.now(),
      limit: limit + 1,
    }),
  );
  return page("checkpoints", rows, limit, toCheckpoint);
}

/**
 * A filter object with a prototype of its own (`Object.create(proto)`, a class instance) would have only its own keys
 * read: the keys it inherits would be dropped, widening the filter to every checkpoint of the user. It is refused.
 */
function refuseInheritedKeys(input: unknown): void {
  const given = (input as { metadata?: unknown } | null)?.metadata;
  if (typeof given !== "object" || given === null || Array.isArray(given)) return;
  const proto: unknown = Object.getPrototypeOf(given);
  if (proto !== Object.prototype && proto !== null)
    throw new ValidationError("metadata", "must be a plain object (its own keys are matched; this one has a prototype of its own)");
}

/**
 * The filter's own `__proto__` key, as JSON.parse of a request gives it, which the schema passes by: checked as any
 * other value and matched exactly (never dropped, which would widen the filter to every checkpoint of the user).
 * Returned as an own property of a null-prototype object, so that spreading it keeps it a key.
 */
function ownProtoKey(input: unknown): Record<string, unknown> {
  const given = (input as { metadata?: unknown }).metadata;
  if (typeof given !== "object" || given === null || !Object.hasOwn(given, "__proto__")) return {};
  const value: unknown = (given as Record<string, unknown>)["__proto__"];
  const out = Object.create(null) as Record<string, unknown>;
  out["__proto__"] = parseInput(metadataFilterValue, value, "metadata.__proto__", true);
  return out;
}
