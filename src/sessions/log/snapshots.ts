// State snapshots: the state document at a position, stored once under its canonical hash (and version).
import { type JsonValue } from "../../models/json.js";
import type { Step, Tx } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { canonicalJson, stateAddress } from "../integrity/hashes.js";
import { DEFAULT_STATE_SCHEMA, migrateState } from "../core/state-schema.js";

/** The state document with snapshot id `stateId` (null: `{}`) as recorded, with the state version it was recorded under. */
export function* readRecordedState(tx: Tx, stateId: number | null): Step<{ value: JsonValue; version: number }> {
  if (stateId === null) return { value: {}, version: 1 };
  const snapshot = (yield* tx.getSnapshot(stateId))!;
  return { value: JSON.parse(snapshot.body) as JsonValue, version: snapshot.version ?? 1 };
}

/**
 * The state document with snapshot id `stateId` (null: `{}`) at the opener's state version: an older one runs through
 * `migrateState` (the stored one stays as recorded). `{}` is every version's empty state.
 */
export function* readState(ctx: Pick<EngineContext, "stateSchema" | "limits">, tx: Tx, stateId: number | null): Step<JsonValue> {
  if (stateId === null) return {};
  const { value, version } = yield* readRecordedState(tx, stateId);
  return migrateState(ctx.stateSchema ?? DEFAULT_STATE_SCHEMA, value, version, ctx.limits);
}

/** Stores `value`, written under the opener's state version, once by its canonical hash; returns the snapshot's id and hash. */
export function* storeSnapshot(ctx: Pick<EngineContext, "stateSchema">, tx: Tx, value: JsonValue): Step<{ id: number; hash: string }> {
  const version = (ctx.stateSchema ?? DEFAULT_STATE_SCHEMA).version;
  const text = canonicalJson(value);
  const hash = stateAddress(text, version);
  const id = yield* tx.putSnapshot(hash, text, version);
  return { id, hash };
}
