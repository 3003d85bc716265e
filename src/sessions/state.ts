// getState / setState: the session state document; each change is a log entry pointing at a content-addressed snapshot.
import { ValidationError } from "../models/errors.js";
import { toJsonText, type JsonInput, type JsonValue } from "../models/json.js";
import type { Store } from "../store/store.js";
import type { EngineContext, SessionRef } from "./context.js";
import { canonicalJson, sha256 } from "./integrity.js";
import { writeEntry } from "./log-writer.js";
import { ownedCurrent } from "./ownership.js";

/** The state document with snapshot id `stateId` (null: `{}`). */
export function readState(store: Store, stateId: number | null): JsonValue {
  if (stateId === null) return {};
  return JSON.parse(store.getSnapshot(stateId)!.body) as JsonValue;
}

/** Stores `value` once by its canonical hash; returns the snapshot's id and hash. */
export function storeSnapshot(store: Store, value: JsonValue): { id: number; hash: string } {
  const text = canonicalJson(value);
  const hash = sha256(text);
  const id = store.snapshotId(hash) ?? store.insertSnapshot(hash, text);
  return { id, hash };
}

export async function getState(ctx: EngineContext, ref: SessionRef): Promise<JsonValue> {
  return ctx.store.read(() => {
    return readState(ctx.store, ownedCurrent(ctx.store, ref.id, ref.userId).head.stateId);
  });
}

/** The new state (any JSON, a framework's own interfaces too: checked at run time), or a function of the previous one. */
export type StateUpdate = JsonInput | ((previous: JsonValue) => JsonInput);

/** Sets the state (or applies an updater to it atomically); returns the new state. */
export async function setState(ctx: EngineContext, ref: SessionRef, next: StateUpdate): Promise<JsonValue> {
  if (typeof next !== "function") toJsonText(next, "state", ctx.limits);
  return ctx.store.write(() => {
    const { branch, head } = ownedCurrent(ctx.store, ref.id, ref.userId);
    let value = next as JsonValue;
    if (typeof next === "function") {
      value = next(readState(ctx.store, head.stateId));
      if (value instanceof Promise) throw new ValidationError("state", "an updater function must return the new state synchronously");
      toJsonText(value, "state", ctx.limits);
    }
    const snapshot = storeSnapshot(ctx.store, value);
    writeEntry(ctx, branch.id, head, { kind: "state", state: snapshot });
    return JSON.parse(canonicalJson(value)) as JsonValue;
  });
}
