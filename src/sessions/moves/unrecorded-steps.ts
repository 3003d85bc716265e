// A move step whose handler finished but whose record could not be written (a lost connection): the process that ran it
// keeps its outcome, and writes it when one of its handles resumes the move, instead of reporting the step unknown.
import type { MoveStepRow } from "../../store/port/index.js";

/** How a step's handler ended, as its record says it: `done` (a replay's result) or `failed` (the error as stored). */
export type StepOutcome = { status: "done"; result: string | null } | { status: "failed"; error: string };

/**
 * Per process, by move and step: outcomes known here but not written. Any handle of this process resumes the move at
 * once (the process is its owner, see ownership.ts), so each must know them, not only the one that ran the step;
 * another process or server that takes the move over marks the step unknown, as after a crash.
 */
const unrecorded = new Map<string, StepOutcome>();

const key = (moveId: string, idx: number) => `${moveId}#${idx}`;

/** Keeps the outcome of `step`, whose record failed to be written (it may have landed: it is written only if not). */
export function keepUnrecorded(step: Pick<MoveStepRow, "moveId" | "idx">, outcome: StepOutcome): void {
  unrecorded.set(key(step.moveId, step.idx), outcome);
}

/** The outcome this process kept for the step, if any. */
export function unrecordedOutcome(moveId: string, idx: number): StepOutcome | undefined {
  return unrecorded.get(key(moveId, idx));
}

/** Forgets what this process kept for a move's steps: written, or no longer this process's to write. */
export function forgetUnrecorded(moveId: string): void {
  for (const k of unrecorded.keys()) if (k.startsWith(`${moveId}#`)) unrecorded.delete(k);
}
