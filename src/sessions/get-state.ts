// getState: the current branch's state document at its head.
import { type JsonValue } from "../models/json.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedCurrent } from "./core/owned.js";
import { readState } from "./log/snapshots.js";

export async function getState(ctx: EngineContext, ref: SessionRef): Promise<JsonValue> {
  return ctx.store.read(function* (tx) {
    return yield* readState(ctx, tx, (yield* ownedCurrent(tx, ref.id, ref.userId)).head.stateId);
  });
}
