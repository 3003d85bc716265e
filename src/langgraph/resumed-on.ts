// The branch a task's resume values at a checkpoint were stored on: a head moved back there serves only those since.
import { RESUME } from "@langchain/langgraph-checkpoint";
import { RESUMED_ON, parseResumeMark, resumeMarkValue } from "../sessions/langgraph-bridge.js";
import type { LgThreadRow, LgWriteRow, Step, Tx } from "../store/port/index.js";

/**
 * The channel (`RESUMED_ON`) and index of a task's mark at a checkpoint: the branch its resume values there were last
 * stored on (the current branch of the session of the thread's root graph, which a move forks; a subgraph's session is
 * never moved), and that session's newest checkpoint then with its seq (a rollback to a user's checkpoint taken before
 * them forks, even once that checkpoint is gone).
 * LangGraph stores a task's resume values anew, at one index, each time it resumes it: a move back to the checkpoint
 * leaves those of the runs it undid stored, and only the mark tells them from those of a run since. Never served as a
 * write of its own (`sortedWrites` leaves it out).
 */
export { RESUMED_ON };
export const RESUMED_ON_IDX = -1004;

/**
 * Marks the resume values among `rows` (writes about to be stored in `thread`) with the branch they are stored on: all
 * when they replace those stored (`replace`: a task's special writes alone); else those with none stored in their
 * place (LangGraph's regular writes are written once: a resume value stored already stays, and so does its mark).
 */
export function* markResumedOn(tx: Tx, thread: LgThreadRow, rows: readonly Omit<LgWriteRow, "sessionId">[], replace: boolean): Step<void> {
  let resumed = rows.filter((r) => r.channel === RESUME);
  if (resumed.length === 0) return;
  if (!replace) {
    const stored = new Set((yield* tx.langgraph.writesOf(thread.sessionId, resumed[0]!.checkpointId)).map((w) => `${w.taskId}\0${w.idx}`));
    resumed = resumed.filter((r) => !stored.has(`${r.taskId}\0${r.idx}`));
    if (resumed.length === 0) return;
  }
  const root = thread.checkpointNs === "" ? thread : yield* tx.langgraph.getThread(thread.userId, thread.threadId, "");
  const branchId = root && (yield* tx.getSession(root.sessionId))?.currentBranchId;
  if (branchId === undefined) return;
  // At time 0 every checkpoint is live: the newest one, expired or not.
  const newest = yield* tx.liveCheckpointAt(root!.userId, root!.sessionId, 0, 0);
  const value = resumeMarkValue({ branchId, after: newest?.id, seq: newest?.seq });
  const marks = new Map(resumed.map((r) => [r.taskId, r]));
  yield* tx.langgraph.insertWrites(
    [...marks.values()].map((r) => ({ ...r, sessionId: thread.sessionId, idx: RESUMED_ON_IDX, channel: RESUMED_ON, type: "json", value })),
    true,
  );
}

/** The ids of the tasks whose resume values at a checkpoint of a session were stored on `branchId` (`markResumedOn`). */
export function* resumedOnBranch(tx: Tx, sessionId: string, checkpointId: string, branchId: string): Step<Set<string>> {
  const rows = (yield* tx.langgraph.writesOf(sessionId, checkpointId)).filter((w) => w.channel === RESUMED_ON);
  return new Set(rows.filter((w) => parseResumeMark(w.value).branchId === branchId).map((w) => w.taskId));
}

/** The current branch of the session of the thread's root graph (the thread's own when it is the root's). */
export function* rootBranchOf(tx: Tx, thread: LgThreadRow): Step<string | undefined> {
  const root = thread.checkpointNs === "" ? thread : yield* tx.langgraph.getThread(thread.userId, thread.threadId, "");
  return root && (yield* tx.getSession(root.sessionId))?.currentBranchId;
}
