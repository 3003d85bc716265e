// The wrapped AI SDK tool's check, run where its call is journaled, that the answer form it chose to follow is still the one to follow.
import { ConflictError } from "../models/errors.js";
import type { Message } from "../models/types.js";
import type { SessionRow, Step, Tx } from "../store/port/index.js";
import { tailsAfter } from "../sessions/writes/append-where.js";

/** A call refused because what it chose to follow changed since it read it (a step's save landed): nothing was written. */
export class FollowedChanged extends ConflictError {
  constructor() {
    super("what the call chose to follow changed before it was journaled: nothing was written");
  }
}

/** One read the choice was made from: what follows message `of`, and whether it still leads to the same choice. */
export interface FollowedRead {
  of: string;
  holds: (tails: Message[][]) => boolean;
}

/**
 * A journal `check` (see `CallOptions`): for each read, `holds` tells, given what follows message `of` in the unit that
 * journals the call (each message after it, on any branch, with those after it on its branch), whether the caller would
 * choose the same form to follow; when one would not, the call is refused with `FollowedChanged`, for the caller to read
 * again.
 */
export const followedCheck = (reads: FollowedRead[]) => ({ unit: followedUnit, context: reads });

function* followedUnit(tx: Tx, session: SessionRow, reads: FollowedRead[]): Step<void> {
  for (const { of, holds } of reads) if (!holds(yield* tailsAfter(tx, session.id, of))) throw new FollowedChanged();
}
