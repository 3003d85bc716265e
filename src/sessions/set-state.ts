// setState: a new state document (or an update of the current one), recorded as an entry of the log.
import type { Step, Tx } from "../store/port/index.js";
import { ValidationError } from "../models/errors.js";
import { readingInput, toJsonText, type JsonInput, type JsonValue } from "../models/json.js";
import type { WriteOptions } from "../models/inputs.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { checkIfAt, type IfAt } from "./core/if-at.js";
import { canonicalJson } from "./integrity/hashes.js";
import { readRecordedState, readState, storeSnapshot } from "./log/snapshots.js";
import { writeEntry } from "./log/writer.js";
import { applyOnce, recordRequest, requestOf, writeControlOf, type AnswerCodec, type Request } from "./requests/ledger.js";
import { afterMoves, currentToWrite } from "./writes/after-moves.js";

/** The new state (any JSON, a framework's own interfaces too: checked at run time), or a function of the previous one. */
export type StateUpdate = JsonInput | ((previous: JsonValue) => JsonInput);

/** A state change as the request ledger keeps it: its entry, whose state is read back for a retry. */
const stateAnswer: AnswerCodec<{ entryId: string; value: JsonValue }> = {
  encode: ({ entryId }) => JSON.stringify(entryId),
  *decode(tx, answer) {
    const entryId = JSON.parse(answer) as string;
    return { entryId, value: yield* stateOfEntry(tx, entryId) };
  },
};

/** The state an entry set, as recorded (what `setState` returned: its canonical JSON). */
function* stateOfEntry(tx: Tx, entryId: string): Step<JsonValue> {
  return (yield* readRecordedState(tx, (yield* tx.getEntry(entryId))!.stateId)).value;
}

/**
 * Sets the state (or applies an updater to it atomically); returns the new state. With `requestId`, applied once per
 * session: an updater is told apart from another by its source text (the arguments of a call are what it stores).
 */
export async function setState(ctx: EngineContext, ref: SessionRef, next: StateUpdate, options?: WriteOptions): Promise<JsonValue> {
  // A value is copied as the call is made: a change the caller makes after it is not what gets stored.
  const text = typeof next === "function" ? null : toJsonText(next, "state", ctx.limits);
  const given = text === null ? null : (JSON.parse(text) as JsonValue);
  const { requestId, ifAt } = writeControlOf(options);
  const request = requestOf(requestId, "setState", text === null ? { updater: String(next) } : { state: given }, stateAnswer);
  const out = await applyOnce(ctx, ref, request, () =>
    afterMoves(ctx, ref, () => ctx.store.write({ sessionId: ref.id }, (tx) => setStateUnit(tx, ref, given, next, ctx, request, ifAt))),
  );
  return out.value;
}

function* setStateUnit(
  tx: Tx,
  ref: SessionRef,
  given: JsonValue,
  next: StateUpdate,
  ctx: EngineContext,
  request: Request<{ entryId: string; value: JsonValue }> | undefined,
  ifAt: IfAt | undefined,
) {
  const { session, branch, head } = yield* currentToWrite(ctx, tx, ref.id, ref.userId);
  yield* checkIfAt(tx, session, ifAt, head.position);
  let value = given as JsonValue;
  if (typeof next === "function") {
    value = next(yield* readState(ctx, tx, head.stateId));
    if (readingInput(() => value instanceof Promise, "state"))
      throw new ValidationError("state", "an updater function must return the new state synchronously");
    toJsonText(value, "state", ctx.limits);
  }
  const snapshot = yield* storeSnapshot(ctx, tx, value);
  const entry = yield* writeEntry(ctx, tx, branch.id, head, { kind: "state", state: snapshot });
  const done = { entryId: entry.id, value: JSON.parse(canonicalJson(value)) as JsonValue };
  yield* recordRequest(ctx, tx, session.id, request, done);
  return done;
}
