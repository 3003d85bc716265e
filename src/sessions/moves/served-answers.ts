// Which answers two lineages serve at one LangGraph checkpoint, by the branch each task's resume values came from.
import type { BranchRow, CheckpointRow, Step, Tx } from "../../store/port/index.js";
import { markSeq } from "./mark-seq.js";
import { RESUMED_ON, parseResumeMark } from "./resume-mark.js";

/** A task's mark at the checkpoint: the branch its resume values were stored on, and when (`after`'s seq: `markSeq`). */
interface Stored {
  taskId: string;
  branchId: string;
  after: string | undefined;
  afterSeq: number;
}

/**
 * The marks of the tasks' resume values at LangGraph checkpoint `checkpointId`: the one in place and those kept aside
 * when another branch's resume wrote over them (their task ids end with the task's: `|<task id>`).
 */
function* marksAt(tx: Tx, sessionId: string, checkpointId: string): Step<Stored[]> {
  const rows = (yield* tx.langgraph.writesOf(sessionId, checkpointId)).filter((w) => w.channel === RESUMED_ON);
  const out: Stored[] = [];
  for (const w of rows) {
    const mark = parseResumeMark(w.value);
    out.push({
      taskId: w.taskId.slice(w.taskId.lastIndexOf("|") + 1),
      branchId: mark.branchId,
      after: mark.after,
      afterSeq: yield* markSeq(tx, sessionId, mark),
    });
  }
  return out;
}

/**
 * What `branch`'s lineage serves of each task's resume values at the checkpoint, as of user checkpoint `upTo` (none:
 * the branch's head): those its branch stored before `upTo`, else (with none stored there) those of the branch it
 * forked from at `position`, as of its fork's checkpoint. A task's values stored on a branch only after the cut leave
 * what it served then unknown (a resume there writes over the branch's own): a token of the cut alone.
 */
function* servedAnswers(
  tx: Tx,
  marks: Stored[],
  branch: BranchRow,
  upTo: CheckpointRow | undefined,
  position: number,
): Step<Map<string, string>> {
  const served = new Map<string, string>();
  const tasks = new Set(marks.map((m) => m.taskId));
  let at: BranchRow | undefined = branch;
  let cut = upTo;
  while (at && tasks.size > 0) {
    const here = marks.filter((m) => m.branchId === at!.id);
    for (const taskId of [...tasks]) {
      const own = here.filter((m) => m.taskId === taskId);
      if (own.length === 0) continue;
      const before = own.filter((m) => m.afterSeq < (cut?.seq ?? Infinity)).sort((a, b) => b.afterSeq - a.afterSeq)[0];
      served.set(taskId, before ? `${at.id}@${before.after}` : `?${at.id}@${cut?.id}`);
      tasks.delete(taskId);
    }
    if (at.forkPosition !== position || at.parentId === null) break;
    // A fork there with no checkpoint to cut at serves what its parent did then: unknown, unless both lineages share it.
    if (at.forkCheckpointId === null) {
      for (const taskId of tasks) served.set(taskId, `?${at.id}`);
      break;
    }
    cut = yield* tx.getCheckpoint(at.forkCheckpointId);
    at = yield* tx.getBranch(at.parentId);
  }
  return served;
}

/**
 * True when a rollback to user checkpoint `cp` would serve other resume values at LangGraph checkpoint `checkpointId`
 * (at `cp`'s position) than the session's current `branch` serves there: a task answered on another branch, or on one
 * of the lineages only after the other was cut from it. Both read the same checkpoint with no message between, so only
 * the answers there tell the lineages apart (and the tasks' results follow from them).
 */
export function* answersDiffer(tx: Tx, sessionId: string, checkpointId: string, branch: BranchRow, cp: CheckpointRow): Step<boolean> {
  const marks = yield* marksAt(tx, sessionId, checkpointId);
  if (marks.length === 0) return false;
  const target = yield* tx.getBranch(cp.branchId);
  if (!target) return false;
  const now = yield* servedAnswers(tx, marks, branch, undefined, cp.position);
  const then = yield* servedAnswers(tx, marks, target, cp, cp.position);
  const tasks = new Set([...now.keys(), ...then.keys()]);
  return [...tasks].some((t) => now.get(t) !== then.get(t));
}
