// The mark a saver's own fork leaves on the checkpoint it lands in the fork's transaction, telling it from a user's move.
import { RESUMED_ON, entryAt, headOf, parseResumeMark } from "../sessions/langgraph-bridge.js";
import { ranOnBy } from "./ran-on.js";
import type { BranchRow, LgPointRow, LgWriteRow, Step, Tx } from "../store/port/index.js";

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
 * Whether a later run went on from the saver's fork on the branch: a LangGraph checkpoint there put by another run than
 * the fork's first one (another invoke from the thread, a resume; each run's puts carry its id, `langgraph.saverRun`),
 * a resume of a wait there or a call another run journaled there, before that run puts anything (`RESUMED_ON`,
 * `ran-on.ts`), a user's message written outside any run (an app's own append after the branch's last LangGraph
 * checkpoint), or an `updateState` there (any state it sets). A fork an `updateState` made with a user's message (an
 * edit of a past one) is a turn itself. Such a turn is no run forking side by side, and a run left behind by the fork
 * would undo it if it went on. Messages the fork's own run writes (a critic's, a subgraph's input) are no turn.
 */
export function* turnedSince(tx: Tx, sessionId: string, branchId: string): Step<boolean> {
  const points = (yield* tx.langgraph.pointsOf(sessionId)).filter((p) => p.branchId === branchId);
  const first = firstOn(points, branchId);
  const branch = yield* tx.getBranch(branchId);
  if (first === undefined || !branch) return false;
  // A resume answering a wait on the fork (its values stored there while the fork was current) is a later run, even
  // when it puts no checkpoint (it stops at the task's next question, or its run puts nothing before it ends).
  for (const point of points) if (yield* resumedOn(tx, sessionId, point, branchId)) return true;
  const forkRun = yield* runAt(tx, first);
  // A fork put by no run (`updateState` at an older checkpoint: an edit of a past message) with a user's message in
  // it is the user's turn itself.
  if (forkRun === undefined && (yield* userMessageIn(tx, branch, branch.forkPosition, first.position))) return true;
  // A call another run journaled on the fork (a run in flight under durability "exit" has put nothing yet).
  for (const point of points) if (point.seq >= first.seq && (yield* ranOnBy(tx, sessionId, point, branchId, forkRun))) return true;
  let last = first.position;
  for (const point of points.filter((p) => p.seq > first.seq).sort((a, b) => a.seq - b.seq)) {
    const run = yield* runAt(tx, point);
    if (run !== undefined && run !== forkRun) return true;
    // A put of no run (`updateState`) is the user's own edit of the fork's state (a message, a corrected answer).
    if (run === undefined && forkRun !== undefined) return true;
    last = Math.max(last, point.position);
  }
  return yield* userMessageIn(tx, branch, last, (yield* headOf(tx, branch)).position);
}

/**
 * The marks `prune` writes before it drops `dropped` (checkpoint ids) of the session: on each branch whose first
 * LangGraph checkpoint is a saver's fork's and goes, the first one it keeps there carries the mark over, unless a later
 * run went on from the fork (`turnedSince`): the branch then counts as a user's move, as that turn made it one.
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
    // A fork a later run went on from is carried as a user's move: the kept checkpoints may all be that run's.
    if (kept && (yield* markedAt(tx, sessionId, first)) && !(yield* turnedSince(tx, sessionId, branchId))) {
      marks.push(forkedMark(sessionId, kept.checkpointId));
    }
  }
  return marks;
}

/** The first LangGraph checkpoint stored on the branch (by its forkpoint checkpoint's seq). */
function firstOn(points: readonly LgPointRow[], branchId: string): LgPointRow | undefined {
  let first: LgPointRow | undefined;
  for (const point of points) if (point.branchId === branchId && (first === undefined || point.seq < first.seq)) first = point;
  return first;
}

/** Whether a user's message is on the branch after position `from`, up to `to`. */
function* userMessageIn(tx: Tx, branch: BranchRow, from: number, to: number): Step<boolean> {
  for (let position = from + 1; position <= to; position++) {
    const entry = yield* entryAt(tx, branch, position);
    if (entry?.kind === "message" && entry.role === "user") return true;
  }
  return false;
}

/** Whether resume values at the checkpoint were stored while `branchId` was the session's current branch. */
function* resumedOn(tx: Tx, sessionId: string, point: LgPointRow, branchId: string): Step<boolean> {
  const writes = yield* tx.langgraph.writesOf(sessionId, point.checkpointId);
  return writes.some((w) => w.channel === RESUMED_ON && parseResumeMark(w.value).branchId === branchId);
}

/** The id of the run that put the checkpoint (`langgraph.saverRun`), if its saver knew it. */
function* runAt(tx: Tx, point: LgPointRow): Step<string | undefined> {
  const row = yield* tx.getCheckpoint(point.fpCheckpointId);
  const metadata = row?.metadata ? (JSON.parse(row.metadata) as { langgraph?: { saverRun?: unknown } }) : undefined;
  const run = metadata?.langgraph?.saverRun;
  return typeof run === "string" ? run : undefined;
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
