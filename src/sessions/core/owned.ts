// Every read and write is scoped to one user: another user's ids look exactly like unknown ids.
import { NotFoundError } from "../../models/errors.js";
import type { BranchRow, CheckpointAnchorRow, CheckpointRow, EntryRow, HeadRow, SessionRow, Step, Tx } from "../../store/port/index.js";
import { headAfter, type Head } from "./head.js";

export function* ownedSession(tx: Tx, sessionId: string, userId: string): Step<SessionRow> {
  const row = yield* tx.getSession(sessionId);
  if (!row || row.userId !== userId) throw new NotFoundError("session", sessionId);
  return row;
}

/** The user's session with its current branch and that branch's head: one lookup, where every write starts. */
export function* ownedCurrent(tx: Tx, sessionId: string, userId: string): Step<{ session: SessionRow; branch: BranchRow; head: Head }> {
  const row = yield* tx.currentOf(sessionId);
  if (!row || row.session.userId !== userId) throw new NotFoundError("session", sessionId);
  return { session: row.session, branch: row.branch, head: yield* headAfter(tx, row.branch, row.last ?? row.base) };
}

/** A live checkpoint of this session; expired ones and other sessions' are not found. */
export function* sessionCheckpoint(tx: Tx, session: SessionRow, checkpointId: string, now: number): Step<CheckpointRow> {
  return live(yield* tx.getCheckpoint(checkpointId), session, checkpointId, now);
}

/** `sessionCheckpoint` with the checkpoint's branch and anchor entries, read in the same lookup (for a rollback). */
export function* sessionCheckpointAnchor(tx: Tx, session: SessionRow, checkpointId: string, now: number): Step<CheckpointAnchorRow> {
  const row = yield* tx.checkpointAnchor(checkpointId);
  live(row?.checkpoint, session, checkpointId, now);
  return row!;
}

function live(cp: CheckpointRow | undefined, session: SessionRow, checkpointId: string, now: number): CheckpointRow {
  if (!cp || cp.sessionId !== session.id || (cp.expiresAt !== null && cp.expiresAt <= now))
    throw new NotFoundError("checkpoint", checkpointId);
  return cp;
}

/**
 * A message entry on one of this session's branches, with its branch and, when the entry before it is the branch's
 * own, that entry's head (`base`; undefined otherwise: read it through the lineage).
 */
export function* sessionMessage(
  tx: Tx,
  session: SessionRow,
  messageId: string,
): Step<{ message: EntryRow; branch: BranchRow; base: HeadRow | undefined }> {
  const row = yield* tx.entryWithBase(messageId);
  if (row && row.entry.kind === "message" && row.branch.sessionId === session.id)
    return { message: row.entry, branch: row.branch, base: row.base };
  throw new NotFoundError("message", messageId);
}
