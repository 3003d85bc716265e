// getState / setState: the session state document; each change is a log entry pointing at a content-addressed snapshot.
import { ValidationError } from "../models/errors.js";
import { toJsonText, type JsonInput, type JsonValue } from "../models/json.js";
import type { Step, Tx } from "../store/port/index.js";
import type { EngineContext, SessionRef } from "./context.js";
import { canonicalJson, sha256 } from "./integrity.js";
import { writeEntry } from "./log-writer.js";
import { ownedCurrent } from "./ownership.js";

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

export async function getState(ctx: EngineContext, ref: SessionRef): Promise<JsonValue> {
  return ctx.store.read(function* (tx) {
    return yield* readState(tx, (yield* ownedCurrent(tx, ref.id, ref.userId)).head.stateId);
  });
}

/** The new state (any JSON, a framework's own interfaces too: checked at run time), or a function of the previous one. */
export type StateUpdate = JsonInput | ((previous: JsonValue) => JsonInput);

/** Sets the state (or applies an updater to it atomically); returns the new state. */
export async function setState(ctx: EngineContext, ref: SessionRef, next: StateUpdate): Promise<JsonValue> {
  if (typeof next !== "function") toJsonText(next, "state", ctx.limits);
  return ctx.store.write({ sessionId: ref.id }, function* (tx) {
    const { branch, head } = yield* ownedCurrent(tx, ref.id, ref.userId);
    let value = next as JsonValue;
    if (typeof next === "function") {
      value = next(yield* readState(tx, head.stateId));
      if (value instanceof Promise) throw new ValidationError("state", "an updater function must return the new state synchronously");
      toJsonText(value, "state", ctx.limits);
    }
    const snapshot = yield* storeSnapshot(tx, value);
    yield* writeEntry(ctx, tx, branch.id, head, { kind: "state", state: snapshot });
    return JSON.parse(canonicalJson(value)) as JsonValue;
  });
}
