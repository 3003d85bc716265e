// atomic: a guarded block, a checkpoint before it and a rollback to that checkpoint (tool effects too) if it throws.
import { z } from "zod";
import { AtomicRollbackError, ValidationError } from "../models/errors.js";
import { baseMoveOptions, parseOptions, type MoveOptions } from "../models/inputs.js";
import type { Checkpoint, MoveResult } from "../models/types.js";

/** What a guarded block needs of its session. */
export interface AtomicTarget {
  checkpoint(options: { name: string }): Promise<Checkpoint>;
  rollback(checkpointId: string, options?: MoveOptions): Promise<MoveResult>;
}

export const atomicOptions = z.strictObject({
  /** The checkpoint's name (default "atomic"). */
  name: z.string().min(1).max(200).optional(),
  /** How the rollback moves (as `rollback`'s options: e.g. `scope: "both"` to put workspace files back too). */
  rollback: baseMoveOptions.optional(),
});

/** Options of `atomic`. */
export type AtomicOptions = z.input<typeof atomicOptions>;

/**
 * Checkpoints, runs `block`, and returns its value. If it throws, the session is rolled back to the checkpoint (its
 * state, messages and tool effects: a new branch from there, as `rollback` makes) and the block's error is rethrown;
 * if that rollback fails too, an `AtomicRollbackError` carries both. The checkpoint stays either way: it marks where
 * the block began.
 */
export async function atomic<T>(target: AtomicTarget, block: () => Promise<T> | T, options: AtomicOptions = {}): Promise<T> {
  const o = parseOptions(atomicOptions, options, "options");
  if (typeof block !== "function") throw new ValidationError("block", "must be a function");
  const cp = await target.checkpoint({ name: o.name ?? "atomic" });
  try {
    return await block();
  } catch (error) {
    try {
      await target.rollback(cp.id, o.rollback);
    } catch (rollbackError) {
      throw new AtomicRollbackError(error, rollbackError, cp.id);
    }
    throw error;
  }
}
