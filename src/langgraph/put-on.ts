// Where a `checkpointer: true` subgraph's checkpoint was put: the lineage of its parent's moves it belongs to.
import { headOf, ownedCurrent } from "../sessions/langgraph-bridge.js";
import type { BranchRow, LineageSegment, Step, Tx } from "../store/port/index.js";

/**
 * The channel and index of a mark stored as a pending write of a `checkpointer: true` subgraph's checkpoint: the branch
 * and head position of the session of the thread's root graph as the checkpoint was put. Such a subgraph's memory is
 * one history across its parent's steps, and a move of the parent forks only the parent's session: a checkpoint put
 * while the root was on another branch is that branch's run, which a switch away from it leaves behind. Never served
 * as a write of its own (`sortedWrites` leaves it out).
 */
export const PUT_ON = "__forkpoint_put_on__";
export const PUT_ON_IDX = -1006;

interface Mark {
  branchId: string;
  position: number;
}

/** What a subgraph's put knows of its run's root step, to tell where the root's session stands for it. */
export interface RootStep {
  /** The root's checkpoint the run travelled from (`RunMark.travelledFrom`). */
  travelledFrom?: string;
  /** The root's checkpoint the subgraph's step runs from (LangGraph's `metadata.parents`). */
  checkpointId?: string;
  /** Under durability "exit": the branch the run's read of the root's head was served on (`RunMark.readOn`). */
  exitReadOn?: string;
}

/**
 * Marks a subgraph's checkpoint `checkpointId` of `sessionId` with where the root's session stands as it is put, or
 * where the root's checkpoint its run travelled from stands (`RootStep.travelledFrom`): under durability "exit" the
 * root's session moves there only when the run's put lands, after the subgraph's.
 */
export function* markPutOn(tx: Tx, userId: string, threadId: string, sessionId: string, checkpointId: string, step: RootStep): Step<void> {
  const root = yield* tx.langgraph.getThread(userId, threadId, "");
  if (!root) return;
  const from = step.travelledFrom === undefined ? undefined : yield* tx.langgraph.pointOf(root.sessionId, step.travelledFrom);
  const { branch, head } = yield* ownedCurrent(tx, root.sessionId, root.userId);
  const at = from ? { branchId: from.branchId, position: from.position } : yield* runBranchMark(tx, branch, head.position, step);
  const mark: Mark = at ?? { branchId: branch.id, position: head.position };
  const value = Buffer.from(JSON.stringify(mark));
  yield* tx.langgraph.insertWrites(
    [{ sessionId, checkpointId, taskId: PUT_ON, idx: PUT_ON_IDX, channel: PUT_ON, type: "json", value, taskPath: "" }],
    true,
  );
}

/**
 * The root's checkpoint the subgraph's step runs from, off the lineage of the session's current branch: another run's
 * time travel forked beside this run meanwhile (a user's move stops the run before its subgraph puts), and this run's
 * root goes on from its own branch, where its subgraph's checkpoint belongs. Under durability "exit" that step is not
 * stored yet (the root puts once, at the end): the head of the branch the run read the root's head on, which the run's
 * one put goes on from. Undefined (the session's current branch, at its head) when that point is on the current
 * lineage: a rollback to the step's checkpoint forks right at it, and the run goes on there.
 */
function* runBranchMark(tx: Tx, current: BranchRow, head: number, step: RootStep): Step<Mark | undefined> {
  const stored = step.checkpointId === undefined ? undefined : yield* tx.langgraph.pointOf(current.sessionId, step.checkpointId);
  let mark: Mark | undefined = stored && { branchId: stored.branchId, position: stored.position };
  if (!stored && step.exitReadOn !== undefined) {
    const branch = yield* tx.getBranch(step.exitReadOn);
    mark = branch && { branchId: branch.id, position: (yield* headOf(tx, branch)).position };
  }
  if (!mark) return undefined;
  const { branchId, position } = mark;
  const onLineage = (yield* tx.lineage(current.id, head)).some((s) => s.branchId === branchId && position <= s.upTo);
  return onLineage ? undefined : mark;
}

/** Whether a subgraph's checkpoint was put on a branch of the root the root's lineage (`segments`) does not hold. */
export function* putOffLineage(tx: Tx, sessionId: string, checkpointId: string, segments: LineageSegment[]): Step<boolean> {
  const mark = (yield* tx.langgraph.writesOf(sessionId, checkpointId)).find((w) => w.channel === PUT_ON);
  if (!mark) return false;
  const at = JSON.parse(mark.value.toString("utf8")) as Mark;
  return !segments.some((s) => s.branchId === at.branchId && at.position <= s.upTo);
}
