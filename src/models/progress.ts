// The options every long operator call takes (verify, exportSession, importSession, prune): a signal and a callback.
import { z } from "zod";

/** How far a long call has got: `done` of `total` units (the unit is the call's own; `total` is fixed at the start). */
export interface Progress {
  done: number;
  total: number;
}

/** `{ signal, onProgress }` of a long call. */
export interface LongCallOptions {
  /** Aborting it rejects the call with `AbortedError` (code `ABORTED`, the signal's reason as `cause`). */
  signal?: AbortSignal;
  /**
   * Called with `{ done: 0, total }` first, then at most about every 1% of `total`, and last with `done === total`
   * (when `total` is 0, the one call `{ done: 0, total: 0 }` is that last one, made once the work is over).
   * It runs synchronously: one that throws rejects the call with its error (for import, a throw from the last call
   * comes after the session was written).
   */
  onProgress?: (progress: Progress) => void;
}

/** The fields to spread into a long call's input schema. */
export const longCallFields = {
  signal: z.custom<AbortSignal>((v) => v instanceof AbortSignal, "must be an AbortSignal").optional(),
  onProgress: z.custom<(progress: Progress) => void>((v) => typeof v === "function", "must be a function").optional(),
};
