// Where a `checkpointer: true` subgraph's checkpoint was put: the lineage of its parent's moves it belongs to.
import { ownedCurrent } from "../sessions/langgraph-bridge.js";
import type { LineageSegment, Step, Tx } from "../store/port/index.js";

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

/**
 * Marks a subgraph's checkpoint `checkpointId` of `sessionId` with where the root's session stands as it is put, or
 * where the root's checkpoint its run travelled from stands (`RunMark.travelledFrom`): under durability "exit" the
 * root's session moves there only when the run's put lands, after the subgraph's.
 */
export function* markPutOn(
  tx: Tx,
  userId: string,
  threadId: string,
  sessionId: string,
  checkpointId: string,
  travelledFrom?: string,
): Step<void> {
  const root = yield* tx.langgraph.getThread(userId, threadId, "");
  if (!root) return;
  const from = travelledFrom === undefined ? undefined : yield* tx.langgraph.pointOf(root.sessionId, travelledFrom);
  const { branch, head } = yield* ownedCurrent(tx, root.sessionId, root.userId);
  const mark: Mark = from ? { branchId: from.branchId, position: from.position } : { branchId: branch.id, position: head.position };
  const value = Buffer.from(JSON.stringify(mark));
  yield* tx.langgraph.insertWrites(
    [{ sessionId, checkpointId, taskId: PUT_ON, idx: PUT_ON_IDX, channel: PUT_ON, type: "json", value, taskPath: "" }],
    true,
  );
}

/** Whether a subgraph's checkpoint was put on a branch of the root the root's lineage (`segments`) does not hold. */
export function* putOffLineage(tx: Tx, sessionId: string, checkpointId: string, segments: LineageSegment[]): Step<boolean> {
  const mark = (yield* tx.langgraph.writesOf(sessionId, checkpointId)).find((w) => w.channel === PUT_ON);
  if (!mark) return false;
  const at = JSON.parse(mark.value.toString("utf8")) as Mark;
  return !segments.some((s) => s.branchId === at.branchId && at.position <= s.upTo);
}
