// A guarded block's checkpoint, held against retention and prune while the block runs, whichever handle, process or
// server weighs or prunes meanwhile: a hold stored with the time it lasts until, renewed while the block runs.
import type { Checkpoint } from "../../models/types.js";
import type { Tx } from "../../store/port/index.js";
import type { EngineContext, SessionRef } from "../core/context.js";
import { holdLease } from "../moves/lease.js";
import { checkpointAfter } from "../writes/checkpoint-after.js";

/** How long a hold lasts unless renewed (ms): a holder that died keeps its checkpoint at most this long. */
export const HOLD_MS = 60_000;

export interface HeldCheckpoint {
  checkpoint: Checkpoint;
  /** Ends the hold (never throws: a hold that could not be deleted lapses by itself). */
  release(): Promise<void>;
}

/** A checkpoint held from the transaction that writes it until `release()`, the hold renewed every third of it. */
export async function heldCheckpoint(ctx: EngineContext, ref: SessionRef, options: { name: string }): Promise<HeldCheckpoint> {
  const { checkpoint } = await checkpointAfter(ctx, ref, [], options, { hold: HOLD_MS });
  const renewing = holdLease(
    ctx,
    ref.id,
    `the hold on checkpoint ${checkpoint.id}`,
    (tx, ms) => renewUnit(tx, checkpoint.id, ref.id, ms),
    HOLD_MS,
  );
  return {
    checkpoint,
    release: async () => {
      await renewing.release();
      // Closed by the app meanwhile: nothing to say, the hold lapses as the docs promise.
      if (ctx.store.closed) return;
      try {
        await ctx.store.write({ sessionId: ref.id }, (tx) => tx.releaseCheckpoint(checkpoint.id));
      } catch (error) {
        ctx.logger.warn(`forkpoint: ending the hold on checkpoint ${checkpoint.id} failed; it lapses by itself`, error);
      }
    },
  };
}

function* renewUnit(tx: Tx, checkpointId: string, sessionId: string, holdMs: number) {
  yield* tx.holdCheckpoint(checkpointId, sessionId, holdMs);
  return true;
}
