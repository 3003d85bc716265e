// setState: a new state document (or an update of the current one), recorded as an entry of the log.
import type { Tx } from "../store/port/index.js";
import { ValidationError } from "../models/errors.js";
import { toJsonText, type JsonInput, type JsonValue } from "../models/json.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedCurrent } from "./core/owned.js";
import { canonicalJson } from "./integrity/hashes.js";
import { readState, storeSnapshot } from "./log/snapshots.js";
import { writeEntry } from "./log/writer.js";

/** The new state (any JSON, a framework's own interfaces too: checked at run time), or a function of the previous one. */
export type StateUpdate = JsonInput | ((previous: JsonValue) => JsonInput);

/** Sets the state (or applies an updater to it atomically); returns the new state. */
export async function setState(ctx: EngineContext, ref: SessionRef, next: StateUpdate): Promise<JsonValue> {
  // A value is copied as the call is made: a change the caller makes after it is not what gets stored.
  const given = typeof next === "function" ? null : (JSON.parse(toJsonText(next, "state", ctx.limits)) as JsonValue);
  return ctx.store.write({ sessionId: ref.id }, (tx) => setStateUnit(tx, ref, given, next, ctx));
}

function* setStateUnit(tx: Tx, ref: SessionRef, given: JsonValue, next: StateUpdate, ctx: EngineContext) {
  const { branch, head } = yield* ownedCurrent(tx, ref.id, ref.userId);
  let value = given as JsonValue;
  if (typeof next === "function") {
    value = next(yield* readState(ctx, tx, head.stateId));
    if (value instanceof Promise) throw new ValidationError("state", "an updater function must return the new state synchronously");
    toJsonText(value, "state", ctx.limits);
  }
  const snapshot = yield* storeSnapshot(ctx, tx, value);
  yield* writeEntry(ctx, tx, branch.id, head, { kind: "state", state: snapshot });
  return JSON.parse(canonicalJson(value)) as JsonValue;
}
