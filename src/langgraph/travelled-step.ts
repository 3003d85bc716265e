// Where a run from an older checkpoint of the root's weighs its `checkpointer: true` subgraphs' memory: that step's end.
import { headOf } from "../sessions/langgraph-bridge.js";
import type { Step, Tx } from "../store/port/index.js";
import { onLineageAt } from "./thread-head.js";

/**
 * The root graph's checkpoint a run that travelled from `checkpointId` (a `Command` resume from `getStateHistory`)
 * weighs its memory subgraphs at: the checkpoint that ended that step on the lineage of the branch `checkpointId` was
 * put on, when the step finished there. The run's put forks along that branch (`afterStepCalls`), keeping the step's
 * calls there whichever branch the root's session stands on: LangGraph runs the step's subgraph again, which must
 * remember that step, not the later ones the fork undoes, nor another branch's answers the fork leaves out. A step
 * that did not finish (a wait resumed from the history): at `checkpointId` itself, where the subgraph waited, not at
 * the root's head (another branch's turns there would be served in its place).
 */
export function* travelledStepEnd(tx: Tx, userId: string, threadId: string, checkpointId: string): Step<string | undefined> {
  const root = yield* tx.langgraph.getThread(userId, threadId, "");
  if (!root) return undefined;
  const children = (yield* tx.langgraph.checkpointsOf(root.sessionId)).filter((c) => c.parentCheckpointId === checkpointId);
  if (children.length === 0) return checkpointId;
  const from = yield* tx.langgraph.pointOf(root.sessionId, checkpointId);
  const branch = from ? yield* tx.getBranch(from.branchId) : undefined;
  if (!branch) return undefined;
  const head = yield* headOf(tx, branch);
  const points = yield* tx.langgraph.pointsOf(root.sessionId);
  const on = yield* onLineageAt(tx, points, yield* tx.lineage(branch.id, head.position), head.position);
  const ids = new Set(children.map((c) => c.checkpointId));
  const ends = on.filter((p) => ids.has(p.checkpointId));
  return ends.reduce<(typeof ends)[number] | undefined>((a, p) => (!a || p.seq < a.seq ? p : a), undefined)?.checkpointId;
}
