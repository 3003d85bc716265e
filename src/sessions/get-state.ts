// getState: the current branch's state document at its head.
import { type JsonValue } from "../models/json.js";
import type { Step, Tx } from "../store/port/index.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedCurrent } from "./core/owned.js";
import { readState } from "./log/snapshots.js";

export async function getState(ctx: EngineContext, ref: SessionRef): Promise<JsonValue> {
  return ctx.store.read((tx) => getStateUnit(ctx, tx, ref));
}

function* getStateUnit(ctx: EngineContext, tx: Tx, ref: SessionRef): Step<JsonValue> {
  return yield* readState(ctx, tx, (yield* ownedCurrent(tx, ref.id, ref.userId)).head.stateId);
}
