// diff: two checkpoints compared — state paths, the shared message and tool prefixes, and each side's rest.
import type { Tx } from "../store/port/index.js";
import { readVerified } from "./log/verified-read.js";
import { isDeepStrictEqual } from "node:util";
import type { JsonValue } from "../models/json.js";
import type { CheckpointDiff } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession, sessionCheckpoint } from "./core/owned.js";
import { toMessage, toToolInvocation } from "./core/rows.js";
import { readState } from "./log/snapshots.js";

const isObject = (v: JsonValue): v is { [k: string]: JsonValue } => typeof v === "object" && v !== null && !Array.isArray(v);

/** Paths are arrays of object keys; arrays compare as whole values; a non-object state changes at `[]`. */
export function diffState(
  a: JsonValue,
  b: JsonValue,
  path: string[] = [],
  out: CheckpointDiff["state"] = { added: [], removed: [], changed: [] },
): CheckpointDiff["state"] {
  if (!isObject(a) || !isObject(b)) {
    if (!isDeepStrictEqual(a, b)) out.changed.push({ path, from: a, to: b });
    return out;
  }
  for (const key of Object.keys(a)) {
    if (!Object.hasOwn(b, key)) out.removed.push({ path: [...path, key], value: a[key]! });
    else diffState(a[key]!, b[key]!, [...path, key], out);
  }
  for (const key of Object.keys(b)) if (!Object.hasOwn(a, key)) out.added.push({ path: [...path, key], value: b[key]! });
  return out;
}

function splitByPrefix<T extends { id: string }>(a: T[], b: T[]): { common: number; onlyA: T[]; onlyB: T[] } {
  let common = 0;
  while (common < a.length && common < b.length && a[common]!.id === b[common]!.id) common++;
  return { common, onlyA: a.slice(common), onlyB: b.slice(common) };
}

export async function diff(ctx: EngineContext, ref: SessionRef, checkpointA: string, checkpointB: string): Promise<CheckpointDiff> {
  return ctx.store.read((tx) => diffUnit(tx, ref, checkpointA, ctx, checkpointB));
}

function* diffUnit(tx: Tx, ref: SessionRef, checkpointA: string, ctx: EngineContext, checkpointB: string) {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  const a = yield* sessionCheckpoint(tx, session, checkpointA, ctx.now());
  const b = yield* sessionCheckpoint(tx, session, checkpointB, ctx.now());
  // Both sides are read in full anyway, so both are verified like a restore.
  const [ra, rb] = [yield* readVerified(tx, a), yield* readVerified(tx, b)];
  const messages = (r: typeof ra) => r.entries.filter((e) => e.kind === "message").map(toMessage);
  return {
    state: diffState(yield* readState(ctx, tx, a.stateId), yield* readState(ctx, tx, b.stateId)),
    messages: splitByPrefix(messages(ra), messages(rb)),
    tools: splitByPrefix(ra.tools.map(toToolInvocation), rb.tools.map(toToolInvocation)),
  };
}
