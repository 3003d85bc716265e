// withCheckpoints: a function wrapped so that every nth call it completes is followed by a checkpoint.
import { z } from "zod";
import { ValidationError } from "../models/errors.js";
import { parseOptions } from "../models/inputs.js";
import type { Checkpoint } from "../models/types.js";

export const withCheckpointsOptions = z.strictObject({
  /** A checkpoint after every `every`th completed call (default 1: after each). */
  every: z.number().int().min(1).max(1_000_000).optional(),
  /** The checkpoints' name (default "step"). */
  name: z.string().min(1).max(200).optional(),
});

/** Options of `withCheckpoints`. */
export type WithCheckpointsOptions = z.input<typeof withCheckpointsOptions>;

/**
 * `fn` wrapped: each call runs it and returns (a promise of) its result; after every `every`th call that returns, the
 * session takes a checkpoint (metadata `{ calls: n }`, n counted per wrapper) before the call's promise resolves. A
 * call that throws is not counted and takes none. Calls made at once are counted as they complete.
 */
export function withCheckpoints<A extends unknown[], R>(
  checkpoint: (options: { name: string; metadata: { calls: number } }) => Promise<Checkpoint>,
  fn: (...args: A) => R,
  options: WithCheckpointsOptions = {},
): (...args: A) => Promise<Awaited<R>> {
  const o = parseOptions(withCheckpointsOptions, options, "options");
  if (typeof fn !== "function") throw new ValidationError("fn", "must be a function");
  const every = o.every ?? 1;
  const name = o.name ?? "step";
  let calls = 0;
  return async (...args: A): Promise<Awaited<R>> => {
    const result: Awaited<R> = await fn(...args);
    const n = ++calls;
    if (n % every === 0) await checkpoint({ name, metadata: { calls: n } });
    return result;
  };
}
