// expire: ends a checkpoint's life now, as its TTL would (one a branch forks from stays readable through the branch).
import type { Tx } from "../store/port/index.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession, sessionCheckpoint } from "./core/owned.js";
import { expireCheckpointsNow } from "./integrity/expiry.js";

export async function expireCheckpoint(ctx: EngineContext, ref: SessionRef, checkpointId: string): Promise<void> {
  await ctx.store.write({ sessionId: ref.id }, (tx) => expireCheckpointUnit(tx, ref, ctx, checkpointId));
}

function* expireCheckpointUnit(tx: Tx, ref: SessionRef, ctx: EngineContext, checkpointId: string) {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  const now = ctx.now();
  const cp = yield* sessionCheckpoint(tx, session, checkpointId, now);
  yield* expireCheckpointsNow(tx, [cp.id], now);
}
