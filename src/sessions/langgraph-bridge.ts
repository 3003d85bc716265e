// ForkpointSaver's one entry into the engine: `src/langgraph/` imports the engine from here and nowhere else.
// It re-exports what the saver uses of the engine (at the end of this file), and holds the saver's own entry points for
// its two-way bridge: a verified read of a lineage up to any point of it (a thread's head, where no checkpoint need
// sit), and a fork at such a point (LangGraph going on from a synthesized checkpoint after the session moved elsewhere).
import type { VerifiedLineage } from "./log/verified-read.js";
import { readAfterKnown } from "./log/verified-read.js";
import type { BaseMoveSpec, WithinMove } from "./moves/move-spec.js";
import { IntegrityError } from "../models/errors.js";
import type { MoveResult } from "../models/types.js";
import type { EntryRow, LineageSegment, SessionRow, Step, Tx } from "../store/port/index.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { GENESIS_HASH, entryHash, snapshotIntact } from "./integrity/hashes.js";
import { entryAt } from "./log/lineage.js";
import { forkedBranch } from "./log/forked-branch.js";
import { performMove } from "./moves/move.js";

/** A point of a session's tree: a position of a branch's lineage, and the hash chain's value there. */
export interface LineagePoint {
  branchId: string;
  position: number;
  hash: string;
}

/**
 * `readVerifiedAfter` for a point no checkpoint marks: the entries after what `known` shares with the lineage are
 * read and chained onto the shared prefix, and the chain must end at the point's hash. (Without a checkpoint there is
 * no checksum to check: the last entry is checked against the hash it records, as every entry is.)
 */
export function* readVerifiedPoint(
  tx: Tx,
  point: LineagePoint,
  known?: VerifiedLineage,
): Step<{ shared: number; fresh: EntryRow[]; segments: LineageSegment[] }> {
  const { shared, fresh, segments } = yield* readAfterKnown(tx, point.branchId, point.position, known);
  let hash = shared > 0 ? known!.links[shared - 1]!.hash : GENESIS_HASH;
  for (let i = 0; i < fresh.length; i++) {
    const e = fresh[i]!;
    if (e.position !== shared + i + 1)
      throw new IntegrityError(`branch ${point.branchId}: history has a gap at position ${shared + i + 1}`);
    let stateHash: string | null = null;
    if (e.kind === "state" && e.stateId !== null) {
      const snap = yield* tx.getSnapshot(e.stateId);
      if (!snap || !snapshotIntact(snap)) throw new IntegrityError(`state snapshot ${e.stateId} does not match its hash`);
      stateHash = snap.hash;
    }
    if (entryHash(hash, e, stateHash) !== e.hash)
      throw new IntegrityError(`branch ${point.branchId}: entry ${e.id} at position ${e.position} does not match its hash`);
    hash = e.hash;
  }
  if (shared + fresh.length !== point.position || hash !== point.hash) {
    throw new IntegrityError(`branch ${point.branchId}: its history does not match the recorded hash chain at position ${point.position}`);
  }
  return { shared, fresh, segments };
}

/**
 * A new branch forked at `point` (after its entry; at the start for position 0), made current, the world moved there
 * as a rollback moves it; `within` writes in the transaction that finishes the move (see `WithinMove`).
 */
export function forkAtPoint(ctx: EngineContext, ref: SessionRef, point: LineagePoint, within?: WithinMove): Promise<MoveResult> {
  return performMove(ctx, ref, "rollback", undefined, (tx, session) => forkSpec(tx, session, point), within);
}

function* forkSpec(tx: Tx, session: SessionRow, point: LineagePoint): Step<BaseMoveSpec> {
  const branch = yield* tx.getBranch(point.branchId);
  if (!branch || branch.sessionId !== session.id) throw new IntegrityError(`branch ${point.branchId} is not in session ${session.id}`);
  const entry = yield* entryAt(tx, branch, point.position);
  if ((entry?.hash ?? GENESIS_HASH) !== point.hash)
    throw new IntegrityError(`branch ${point.branchId}: position ${point.position} is not the point forked at`);
  return {
    kind: "rollback",
    sessionId: session.id,
    userId: session.userId,
    target: { branchId: branch.id, position: point.position },
    newBranch: forkedBranch(session.id, { parentId: branch.id, position: point.position, entryId: entry?.id ?? null }),
    edit: null,
  };
}

// What the saver uses of the engine besides the above: the engine behind a Forkpoint, sessions and their ownership,
// lineage reads, the log writer, the moves a put forks with, the row conversions and hashes its caches keep, and the
// tracking of writes still landing that a session's tool calls wait for.
export { messageFields } from "./writes/message-fields.js";
export type { EngineContext, SessionRef } from "./core/context.js";
export { ownedCurrent, ownedSession, sessionCheckpoint } from "./core/owned.js";
export { afterMoves, servedAfterMoves, currentToServe, currentToWrite } from "./writes/after-moves.js";
export { toCheckpoint, toMessage } from "./core/rows.js";
export { writeNewSession } from "./create-session.js";
export { deleteSessions } from "./delete-session.js";
export { edit } from "./edit.js";
export { engineOf, type Forkpoint } from "./forkpoint.js";
export { GENESIS_HASH, canonicalJson, sha256 } from "./integrity/hashes.js";
export { readVerifiedAfter } from "./log/verified-read.js";
export type { VerifiedLineage } from "./log/verified-read.js";
export { entryAt, lastLineageMessage, lineageMessages } from "./log/lineage.js";
export { headOf, headOfEntry, type Head } from "./core/head.js";
export { LandingWrites } from "./core/landing-writes.js";
export { watchJournal } from "./calls/journal-watch.js";
export { writeCheckpoint, writeMessages, type EntryFields } from "./log/writer.js";
export type { WithinMove } from "./moves/move-spec.js";
export { WRITTEN_ON, markSeq } from "./moves/mark-seq.js";
export { RESUMED_ON, parseResumeMark, resumeMarkValue } from "./moves/resume-mark.js";
export { rollback } from "./rollback.js";
export type { SessionHandle } from "./session-handle.js";
