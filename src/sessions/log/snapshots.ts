// State snapshots: the state document at a position, stored once under its canonical hash.
import { type JsonValue } from "../../models/json.js";
import type { Step, Tx } from "../../store/port/index.js";
import { canonicalJson, sha256 } from "../integrity/hashes.js";

/** The state document with snapshot id `stateId` (null: `{}`). */
export function* readState(tx: Tx, stateId: number | null): Step<JsonValue> {
  if (stateId === null) return {};
  return JSON.parse((yield* tx.getSnapshot(stateId))!.body) as JsonValue;
}

/** Stores `value` once by its canonical hash; returns the snapshot's id and hash. */
export function* storeSnapshot(tx: Tx, value: JsonValue): Step<{ id: number; hash: string }> {
  const text = canonicalJson(value);
  const hash = sha256(text);
  const id = yield* tx.putSnapshot(hash, text);
  return { id, hash };
}
