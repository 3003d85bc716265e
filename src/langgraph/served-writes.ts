// Which of a stored checkpoint's pending writes a read serves: what the session's current lineage still holds of them.
import type { BranchRow, LgCheckpointRow, LgPointRow, LgThreadRow, Step, Tx } from "../store/port/index.js";
import { ownedCurrent, type Head } from "../sessions/langgraph-bridge.js";
import { callsLeftOut, resumedPastUserCheckpoint, type Undone } from "./moved-head-writes.js";
import { resumedOnBranch } from "./resumed-on.js";
import { checkpointAt, type PointCheckpoint } from "./thread-head.js";
import { wentOnFrom } from "./went-on.js";

/** The session's current branch and head, and its LangGraph checkpoints' points (read once for many checkpoints). */
export interface Lineage {
  branch: BranchRow;
  head: Head;
  points: LgPointRow[];
}

/** A `Lineage` with the thread's head checkpoint (what a read without an id gives): what reads by id weigh. */
export interface CurrentLineage extends Lineage {
  served: PointCheckpoint | undefined;
}

/** The thread's current lineage, with its head checkpoint, for reads by id (in a read unit). */
export function* currentLineage(tx: Tx, thread: LgThreadRow): Step<CurrentLineage> {
  const { branch, head } = yield* ownedCurrent(tx, thread.sessionId, thread.userId);
  const points = yield* tx.langgraph.pointsOf(thread.sessionId);
  return { branch, head, points, served: yield* checkpointAt(tx, thread.sessionId, branch, head.position, "head", points) };
}

/**
 * What a move left of a head's checkpoint: the step's tool calls, when the head's world does not hold them all (a
 * rollback to it undid them: its tasks' results are stale); else its continuation, after the graph went on from it,
 * or after its step's tasks were resumed past the user's checkpoint the session was moved back to
 * (`resumedPastUserCheckpoint`). Either with the resume values stored on the head's branch since the move
 * (`resumedSince`): the stopped step was resumed there, and asks on from them.
 */
export function* undoneAt(tx: Tx, thread: LgThreadRow, at: PointCheckpoint, current: Lineage): Step<Undone | null> {
  if (at.kind === "stored" && (yield* callsLeftOut(tx, thread.sessionId, at.row, current.points, current.branch, current.head.position))) {
    return yield* resumedSince(tx, thread, at, current, "calls");
  }
  const id = at.kind === "stored" ? at.row.checkpointId : at.synth.id;
  if (yield* wentOnFrom(tx, thread.sessionId, id)) return yield* resumedSince(tx, thread, at, current, "continuation");
  // Resumed past a user's checkpoint the session was moved back to, asking again in the same step (no child written).
  const past =
    at.kind === "stored" &&
    (yield* resumedPastUserCheckpoint(tx, thread.sessionId, at.row, current.points, current.branch, current.head.position));
  // Stopped past it, and resumed on the head's branch since with no call yet (a task that asks again): as resumed.
  if (past === "stopped") return yield* resumedSince(tx, thread, at, current, "continuation");
  if (past !== "ran" || at.kind !== "stored") return null;
  // Run there since: its results are served, and of its resume values those given on the head's branch.
  const fresh = yield* resumedOnBranch(tx, thread.sessionId, at.row.checkpointId, current.branch.id);
  return { fresh, results: "stored" };
}

/**
 * `undone`, or the step resumed since the move (`Resumed`) when resume values at the head's checkpoint were stored on
 * the session's current branch and that branch is not the checkpoint's (a move forked it: what was stored on it came
 * after the move).
 */
function* resumedSince(tx: Tx, thread: LgThreadRow, at: PointCheckpoint, current: Lineage, undone: Undone): Step<Undone> {
  if (at.kind !== "stored") return undone;
  const point = current.points.find((p) => p.checkpointId === at.row.checkpointId);
  if (!point || point.branchId === current.branch.id) return undone;
  const fresh = yield* resumedOnBranch(tx, thread.sessionId, at.row.checkpointId, current.branch.id);
  if (fresh.size === 0) return undone;
  return undone === "calls" ? { fresh, calls: true } : { fresh };
}

/**
 * What a read by its id (`getTuple` with a `checkpoint_id`, `list`) leaves out of a stored checkpoint's pending writes
 * (`shownAtMovedHead`), judged on the session's current lineage, whatever moves came since the writes were made:
 * - the thread's head (the checkpoint a read without an id gives) is served as the head is (`undoneAt` when the
 *   session was moved there), so a run from its id resumes as a run from the thread does;
 * - any other keeps only its interrupts and errors when a tool call of its step is not in the current world (off the
 *   lineage, or undone on it: `callsLeftOut`), so a result whose call was undone is never served as done;
 * - else every write, as LangGraph's savers keep them (the history the lineage holds).
 */
export function* undoneById(tx: Tx, thread: LgThreadRow, row: LgCheckpointRow, current: CurrentLineage): Step<Undone | null> {
  const head = current.served;
  if (head?.kind === "stored" && head.row.checkpointId === row.checkpointId) {
    return head.moved === true ? yield* undoneAt(tx, thread, head, current) : null;
  }
  return (yield* callsLeftOut(tx, thread.sessionId, row, current.points, current.branch, current.head.position)) ? "calls" : null;
}
