// Where the graph went on from a checkpoint whose continuation `prune` dropped: a head moved back there hides it still.
import type { LgWriteRow, Step, Tx } from "../store/port/index.js";

/**
 * The channel and index of the mark `prune` leaves at a kept checkpoint all of whose children it drops: the graph went
 * on from it. A head moved back there weighs its pending writes by that (`undoneAt`), as it did while the children
 * stood: the writes stay, for the answers and results stored there since on other branches are told apart by their
 * own marks only. Never served as a write of its own (`sortedWrites` leaves it out).
 */
export const WENT_ON = "__forkpoint_went_on__";
export const WENT_ON_IDX = -1007;

/** The mark that the graph went on from `checkpointId` of `sessionId`. */
export function wentOnMark(sessionId: string, checkpointId: string): LgWriteRow {
  return {
    sessionId,
    checkpointId,
    taskId: WENT_ON,
    idx: WENT_ON_IDX,
    channel: WENT_ON,
    type: "json",
    value: Buffer.from("true"),
    taskPath: "",
  };
}

/** Whether the graph went on from a checkpoint: a child stored, or one `prune` dropped (`wentOnMark`). */
export function* wentOnFrom(tx: Tx, sessionId: string, checkpointId: string): Step<boolean> {
  if (yield* tx.langgraph.hasChild(sessionId, checkpointId)) return true;
  return (yield* tx.langgraph.writesOf(sessionId, checkpointId)).some((w) => w.channel === WENT_ON);
}
