// The fence on a move's journal: an owner whose update wrote nothing has lost the move to another and stops.
import { ConflictError } from "../../models/errors.js";

/** A journal update that wrote nothing: another owner took the move over (its lease ran out), so this one stops. */
export function fenced(written: boolean): void {
  if (!written) throw new ConflictError("the move was taken over by another process while this one ran a step", "MOVE_TAKEN_OVER");
}
