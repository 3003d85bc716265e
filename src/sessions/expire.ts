// expire: ends a checkpoint's life now, as its TTL would (one a branch forks from stays readable through the branch).
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession, sessionCheckpoint } from "./core/owned.js";
import { expireCheckpointsNow } from "./integrity/expiry.js";

export async function expireCheckpoint(ctx: EngineContext, ref: SessionRef, checkpointId: string): Promise<void> {
  await ctx.store.write({ sessionId: ref.id }, function* (tx) {
    const session = yield* ownedSession(tx, ref.id, ref.userId);
    const now = ctx.now();
    const cp = yield* sessionCheckpoint(tx, session, checkpointId, now);
    yield* expireCheckpointsNow(tx, [cp.id], now);
  });
}
