// The mark a run's journaled call leaves on its branch's latest LangGraph checkpoint: which run called there.
import type { LgPointRow, LgWriteRow, Step, Tx } from "../store/port/index.js";

/**
 * The channel and index of the mark: a run (`langgraph.saverRun` id) journaled a tool call on the branch after that
 * checkpoint. A run in flight has put nothing yet under durability "exit", and a resume that stops at its task's next
 * question puts no checkpoint: their calls still tell a later run on a saver's fork (`turnedSince`) to any saver.
 * Never served as a write of its own (`sortedWrites` leaves it out).
 */
export const RAN_ON = "__forkpoint_ran_on__";
export const RAN_ON_IDX = -1009;

interface Mark {
  run: string;
  branchId: string;
}

/** Marks the latest LangGraph checkpoint on `branchId` of the session (if any) with a call of the run `run` there. */
export function* markRanOn(tx: Tx, sessionId: string, branchId: string, run: string): Step<void> {
  // One row (the store orders by seq): a scan of every point per journaled call made a long thread's calls quadratic.
  const latest = yield* tx.langgraph.latestPointOn(sessionId, branchId);
  if (!latest) return;
  const mark: Mark = { run, branchId };
  const row: LgWriteRow = {
    sessionId,
    checkpointId: latest.checkpointId,
    taskId: `${RAN_ON}${run}`,
    idx: RAN_ON_IDX,
    channel: RAN_ON,
    type: "json",
    value: Buffer.from(JSON.stringify(mark)),
    taskPath: "",
  };
  yield* tx.langgraph.insertWrites([row], true);
}

/** Whether a run other than `except` journaled a call on `branchId` after the checkpoint (`markRanOn`). */
export function* ranOnBy(tx: Tx, sessionId: string, point: LgPointRow, branchId: string, except: string | undefined): Step<boolean> {
  for (const w of yield* tx.langgraph.writesOf(sessionId, point.checkpointId)) {
    if (w.channel !== RAN_ON) continue;
    const mark = JSON.parse(w.value.toString("utf8")) as Mark;
    if (mark.branchId === branchId && mark.run !== except) return true;
  }
  return false;
}
