// `ifAt`: a write or move runs only while the session is where the caller saw it (its current branch, and head).
import { ConflictError } from "../../models/errors.js";
import type { SessionRow, Step, Tx } from "../../store/port/index.js";
import type { SessionRef } from "./context.js";
import { ownedSession } from "./owned.js";

/** A write's precondition, validated: the current branch and (when given) its head position. */
export interface IfAt {
  branchId: string;
  head?: number | undefined;
}

/**
 * Throws `ConflictError` `SESSION_MOVED` unless the session's current branch is `ifAt.branchId` and, when `ifAt.head` is
 * given, that branch's head is at it. Called inside the unit that writes, before it writes: refused, nothing is written.
 * `head` is the current head position when the unit has read it already (else it is read here, only if needed).
 */
export function* checkIfAt(tx: Tx, session: Pick<SessionRow, "id" | "currentBranchId">, ifAt: IfAt | undefined, head?: number): Step<void> {
  if (!ifAt) return;
  const branchId = session.currentBranchId;
  if (branchId !== ifAt.branchId) throw moved(session.id, ifAt, `is on branch ${branchId}`);
  if (ifAt.head === undefined) return;
  const at = head ?? (yield* tx.headPosition(branchId)) ?? 0;
  if (at !== ifAt.head) throw moved(session.id, ifAt, `is at position ${at} of branch ${branchId}`);
}

/** `checkIfAt` as a read unit of its own, for a caller that checks before it reads or writes anything else. */
export function* checkSessionAt(tx: Tx, ref: SessionRef, ifAt: IfAt): Step<void> {
  yield* checkIfAt(tx, yield* ownedSession(tx, ref.id, ref.userId), ifAt);
}

function moved(sessionId: string, ifAt: IfAt, now: string): ConflictError {
  const expected = ifAt.head === undefined ? `branch ${ifAt.branchId}` : `position ${ifAt.head} of branch ${ifAt.branchId}`;
  return new ConflictError(
    `session ${JSON.stringify(sessionId)} moved: it ${now}, not at ${expected} (ifAt); nothing was written`,
    "SESSION_MOVED",
  );
}
