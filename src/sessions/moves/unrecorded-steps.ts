// A move step whose handler finished but whose record could not be written (a lost connection): the handle that ran it
// keeps its outcome, and writes it when it resumes its own move, instead of reporting the step unknown.
import type { MoveStepRow } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";

/** How a step's handler ended, as its record says it: `done` (a replay's result) or `failed` (the error as stored). */
export type StepOutcome = { status: "done"; result: string | null } | { status: "failed"; error: string };

/**
 * Per handle (its `closing` signal, which every context of the handle shares), by move and step: outcomes known here
 * but not written. Only the handle that ran the step knows it: another handle, process or server that takes the move
 * over marks the step unknown, as after a crash. A closed handle's are dropped with it.
 */
const unrecorded = new WeakMap<AbortSignal, Map<string, StepOutcome>>();

const key = (moveId: string, idx: number) => `${moveId}#${idx}`;

/** Keeps the outcome of `step`, whose record failed to be written (it may have landed: it is written only if not). */
export function keepUnrecorded(ctx: EngineContext, step: Pick<MoveStepRow, "moveId" | "idx">, outcome: StepOutcome): void {
  let kept = unrecorded.get(ctx.closing);
  if (!kept) unrecorded.set(ctx.closing, (kept = new Map()));
  kept.set(key(step.moveId, step.idx), outcome);
}

/** The outcome this handle kept for the step, if any. */
export function unrecordedOutcome(ctx: EngineContext, moveId: string, idx: number): StepOutcome | undefined {
  return unrecorded.get(ctx.closing)?.get(key(moveId, idx));
}

/** Forgets what this handle kept for a move's steps: written, or no longer this handle's to write. */
export function forgetUnrecorded(ctx: EngineContext, moveId: string): void {
  const kept = unrecorded.get(ctx.closing);
  if (!kept) return;
  for (const k of kept.keys()) if (k.startsWith(`${moveId}#`)) kept.delete(k);
}
