// The mark a saver's own fork leaves on the checkpoint it lands in the fork's transaction, telling it from a user's move.
import type { Step, Tx } from "../store/port/index.js";

/**
 * The forkpoint checkpoint's metadata (`put.cpMetadata`, JSON text) with the mark of a checkpoint landed in the
 * transaction of the saver's own fork (a rollback, edit or fork at a point that a put needs): `langgraph.forked`.
 */
export function forkedMetadata(cpMetadata: string): string {
  const parsed = JSON.parse(cpMetadata) as { langgraph?: Record<string, unknown> };
  return JSON.stringify({ ...parsed, langgraph: { ...parsed.langgraph, forked: true } });
}

/**
 * Whether the branch a move made (`branchId`) is a saver's own fork: the first LangGraph checkpoint stored on it (the
 * fork lands one in its own transaction, so none comes before it there) carries the mark. A user's move followed by a
 * LangGraph turn on its branch is no fork of the saver's: that turn's checkpoint has no mark.
 */
export function* forkedBySaver(tx: Tx, sessionId: string, branchId: string): Step<boolean> {
  let first: { fpCheckpointId: string; seq: number } | undefined;
  for (const point of yield* tx.langgraph.pointsOf(sessionId)) {
    if (point.branchId === branchId && (first === undefined || point.seq < first.seq)) first = point;
  }
  if (!first) return false;
  const row = yield* tx.getCheckpoint(first.fpCheckpointId);
  if (!row?.metadata) return false;
  const metadata = JSON.parse(row.metadata) as { langgraph?: { forked?: unknown } };
  return metadata.langgraph?.forked === true;
}
