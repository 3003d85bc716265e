// atomic: a guarded block, a checkpoint before it and a rollback to that checkpoint (tool effects too) if it throws.
import { z } from "zod";
import { AtomicRollbackError, ConflictError, ValidationError } from "../models/errors.js";
import { baseMoveOptions, parseOptions, type MoveOptions } from "../models/inputs.js";
import type { Checkpoint, MoveResult } from "../models/types.js";
import { Backoff } from "./core/backoff.js";
import type { BlockOwn } from "./core/block-scope.js";

/** What a guarded block needs of its session. */
export interface AtomicTarget {
  /** Checkpoints where the block begins, held against retention and prune (in every handle and server) until `release`. */
  begin(options: { name: string }): Promise<{ checkpoint: Checkpoint; release(): Promise<void> }>;
  /** Runs the block, collecting what its own writes and moves did: the branches they land on or make, their undo history. */
  guard<T>(run: (own: BlockOwn) => Promise<T>): Promise<T>;
  /**
   * Rolls back to the block's checkpoint; `own`: the branches the block wrote on or made, continued by the rollback's,
   * and its moves' changes to the undo history, taken back.
   */
  rollback(checkpointId: string, options: MoveOptions | undefined, own: BlockOwn): Promise<MoveResult>;
}

/** How long a rollback waits by default for another server's tool call or move on the session (ms): a lease's length. */
export const ATOMIC_WAIT_MS = 30_000;

export const atomicOptions = z.strictObject({
  /** The checkpoint's name (default "atomic"). */
  name: z.string().min(1).max(200).optional(),
  /** How the rollback moves (as `rollback`'s options: e.g. `scope: "both"` to put workspace files back too). */
  rollback: baseMoveOptions.optional(),
  /**
   * How long the rollback waits for a tool call or a move of the session that runs elsewhere (another handle, process
   * or server) to end, in ms (default 30 s); past it, `AtomicRollbackError` carries the refusal.
   */
  waitMs: z.number().int().min(0).max(2_147_483_647).optional(),
});

/** Options of `atomic`. */
export type AtomicOptions = z.input<typeof atomicOptions>;

/**
 * Checkpoints, runs `block`, and returns its value. If it throws, the session is rolled back to the checkpoint (its
 * state, messages and tool effects: a new branch from there, as `rollback` makes) and the block's error is rethrown;
 * if that rollback fails too, an `AtomicRollbackError` carries both. The checkpoint stays either way: it marks where
 * the block began. While the block runs no retention policy expires it and no prune deletes it; a rollback refused for
 * a call or move running elsewhere is tried again until it ends (at most `waitMs`). That rollback is not in the undo
 * history: a failed block is as if it never ran, and `undo` takes back the user's last move before it (`redo` then
 * comes back to where the block's rollback left the session). Each branch the block wrote on is continued by the
 * rollback's: while its head is where the block left it, every move to that head lands at the rollback branch's head.
 */
export async function atomic<T>(target: AtomicTarget, block: () => Promise<T> | T, options: AtomicOptions = {}): Promise<T> {
  const o = parseOptions(atomicOptions, options, "options");
  if (typeof block !== "function") throw new ValidationError("block", "must be a function");
  const { checkpoint: cp, release } = await target.begin({ name: o.name ?? "atomic" });
  let own: BlockOwn = { branches: new Set(), stack: [], requests: new Map(), starts: new Map() };
  try {
    return await target.guard(async (done) => {
      own = done;
      return await block();
    });
  } catch (error) {
    try {
      await rollbackWhenFree(target, cp.id, o.rollback, o.waitMs ?? ATOMIC_WAIT_MS, own);
    } catch (rollbackError) {
      throw new AtomicRollbackError(error, rollbackError, cp.id);
    }
    throw error;
  } finally {
    await release();
  }
}

/** Refusals that end by themselves: a tool call or a move of the session running elsewhere. */
const BUSY = new Set(["CALL_IN_PROGRESS", "MOVE_IN_PROGRESS"]);

/** Rolls back, trying again (pauses growing to half a second) while the session is busy elsewhere, for `waitMs` at most. */
async function rollbackWhenFree(
  target: AtomicTarget,
  checkpointId: string,
  options: MoveOptions | undefined,
  waitMs: number,
  own: BlockOwn,
) {
  const backoff = Backoff.for(waitMs);
  for (;;) {
    try {
      return await target.rollback(checkpointId, options, own);
    } catch (error) {
      if (!(error instanceof ConflictError && BUSY.has(error.code)) || !(await backoff.wait())) throw error;
    }
  }
}
