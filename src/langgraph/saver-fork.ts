// The mark a saver's own fork leaves on the checkpoint it lands in the fork's transaction, telling it from a user's move.
import { entryAt, headOf } from "../sessions/langgraph-bridge.js";
import type { LgPointRow, LgWriteRow, Step, Tx } from "../store/port/index.js";

/**
 * The channel and index of the mark `prune` carries to the first checkpoint it keeps on a saver's fork's branch when
 * it drops the marked one: the branch stays told apart from a user's move. Never served as a write of its own
 * (`sortedWrites` leaves it out).
 */
export const FORKED = "__forkpoint_forked__";
export const FORKED_IDX = -1008;

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
 * fork lands one in its own transaction, so none comes before it there) carries the mark, or, once `prune` dropped
 * that one, the first it kept there carries the mark it carried over. A user's move followed by a LangGraph turn on
 * its branch is no fork of the saver's: that turn's checkpoint has no mark.
 */
export function* forkedBySaver(tx: Tx, sessionId: string, branchId: string): Step<boolean> {
  const first = firstOn(yield* tx.langgraph.pointsOf(sessionId), branchId);
  return first !== undefined && (yield* markedAt(tx, sessionId, first));
}

/**
 * Whether a user's message follows, on the branch, its first LangGraph checkpoint that applied a step (not LangGraph's
 * copy of the checkpoint time travel went on from, `source: "fork"`, nor an input's, whose message the next step
 * applies): the saver's fork's run's input is at or before it. A later turn went on from that fork (another invoke,
 * an append), which is no run forking side by side, and which a run left behind by the fork would undo if it went on.
 */
export function* turnedSince(tx: Tx, sessionId: string, branchId: string): Step<boolean> {
  const first = firstOn(
    (yield* tx.langgraph.pointsOf(sessionId)).filter((p) => p.source !== "fork" && p.source !== "input"),
    branchId,
  );
  const branch = yield* tx.getBranch(branchId);
  if (first === undefined || !branch) return false;
  const head = yield* headOf(tx, branch);
  for (let position = first.position + 1; position <= head.position; position++) {
    const entry = yield* entryAt(tx, branch, position);
    if (entry?.kind === "message" && entry.role === "user") return true;
  }
  return false;
}

/**
 * The marks `prune` writes before it drops `dropped` (checkpoint ids) of the session: on each branch whose first
 * LangGraph checkpoint is a saver's fork's and goes, the first one it keeps there carries the mark over.
 */
export function* carriedForkMarks(tx: Tx, sessionId: string, dropped: ReadonlySet<string>): Step<LgWriteRow[]> {
  const points = yield* tx.langgraph.pointsOf(sessionId);
  const marks: LgWriteRow[] = [];
  for (const branchId of new Set(points.map((p) => p.branchId))) {
    const first = firstOn(points, branchId)!;
    if (!dropped.has(first.checkpointId)) continue;
    const kept = firstOn(
      points.filter((p) => !dropped.has(p.checkpointId)),
      branchId,
    );
    if (kept && (yield* markedAt(tx, sessionId, first))) marks.push(forkedMark(sessionId, kept.checkpointId));
  }
  return marks;
}

/** The first LangGraph checkpoint stored on the branch (by its forkpoint checkpoint's seq). */
function firstOn(points: readonly LgPointRow[], branchId: string): LgPointRow | undefined {
  let first: LgPointRow | undefined;
  for (const point of points) if (point.branchId === branchId && (first === undefined || point.seq < first.seq)) first = point;
  return first;
}

/** Whether the checkpoint carries the mark: in its forkpoint checkpoint's metadata, or carried over by `prune`. */
function* markedAt(tx: Tx, sessionId: string, point: LgPointRow): Step<boolean> {
  const row = yield* tx.getCheckpoint(point.fpCheckpointId);
  if (row?.metadata) {
    const metadata = JSON.parse(row.metadata) as { langgraph?: { forked?: unknown } };
    if (metadata.langgraph?.forked === true) return true;
  }
  return (yield* tx.langgraph.writesOf(sessionId, point.checkpointId)).some((w) => w.channel === FORKED);
}

/** The mark `prune` carries over to `checkpointId` of `sessionId`. */
function forkedMark(sessionId: string, checkpointId: string): LgWriteRow {
  return {
    sessionId,
    checkpointId,
    taskId: FORKED,
    idx: FORKED_IDX,
    channel: FORKED,
    type: "json",
    value: Buffer.from("true"),
    taskPath: "",
  };
}
