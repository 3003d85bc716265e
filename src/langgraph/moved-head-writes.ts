// Which pending writes of a stored checkpoint a thread shows at a head the session was moved to.
// A move can leave a continuation behind (the graph went on from the checkpoint) or undo the step's tool calls; what
// stands for either is hidden, so LangGraph runs those tasks again rather than bring back results the move undid.
import { RESUME, type CheckpointPendingWrite } from "@langchain/langgraph-checkpoint";
import { isSpecialChannel } from "./special-channels.js";
import { markSeq, parseResumeMark } from "../sessions/langgraph-bridge.js";
import type { BranchRow, LgCheckpointRow, LgPointRow, LgWriteRow, LineageSegment, Step, Tx } from "../store/port/index.js";
import { FIRST_ASKED } from "./first-asked.js";
import { RESUMED_ON } from "./resumed-on.js";

/**
 * What a move left of a stored checkpoint's step: its continuation (the graph went on from it), or its tool calls; or
 * either, with the step resumed on the head's branch since the move (`Resumed`).
 */
export type Undone = "continuation" | "calls" | Resumed;

/**
 * A stopped step resumed since the move: `fresh` names the tasks (and the ids LangGraph stores resume values under:
 * the null task's, an interrupt's) whose resume values at the checkpoint were stored on the head's branch since
 * (`resumed-on.ts`). Theirs are that resume's, and so is the question such a task asked last.
 */
export interface Resumed {
  fresh: ReadonlySet<string>;
  /**
   * The step never went on past the head (no continuation was written, nor calls undone: `resumedPastUserCheckpoint`):
   * its tasks' results are served as stored, only its resume values weighed.
   */
  results?: "stored";
  /**
   * The move undid the step's tool calls before that resume: a subgraph of the step that was not resumed since runs its
   * finished tasks again, as the step's own tasks did (`throughParent`).
   */
  calls?: true;
}

/** Whether a move undid the step's tool calls (`"calls"`, or a resume since that followed such a move). */
export const callsUndone = (undone: Undone | null): boolean => undone === "calls" || (typeof undone === "object" && undone?.calls === true);

/**
 * Of the first interrupts kept at a checkpoint (`firstAskedAt`, by task id), those a head with `undone` shows in place
 * of its tasks' last: the tasks it runs from their start (every one, but those resumed since the move).
 */
export function firstsAsked<T>(firsts: ReadonlyMap<string, T>, undone: Undone | null): Map<string, T> {
  if (undone === null) return new Map();
  return new Map([...firsts].filter(([taskId]) => typeof undone === "string" || !undone.fresh.has(taskId)));
}

/**
 * Whether a pending write on this channel is an interrupt or an error: what the graph waits on at the checkpoint (or a
 * task's first interrupt kept there, `first-asked.ts`: what a head moved back there shows).
 */
const isWait = (channel: string): boolean => (isSpecialChannel(channel) && channel !== RESUME) || channel === FIRST_ASKED;

/**
 * Which of a checkpoint's pending writes (task id, channel) a head moved to it shows. Always its interrupts and errors.
 * When only its continuation is undone, also the results of tasks that finished in a step that stopped (an interrupt or
 * a failure beside them): they ran before the graph waited there. Not the results of tasks that ran in the
 * continuation (those that interrupted or failed, run again once resumed; every task of a step that did not stop),
 * nor the resume values it was given. When the step's calls are undone, no task's result: a call names no task.
 * When the step was resumed since the move (`Resumed`), also the resume values stored since, and the results of tasks
 * that never stopped there (they finished before it stopped, or ran again in that resume); still not the results of
 * the tasks that stopped: the continuation the move left behind wrote them, or a resume since (its checkpoint, where
 * the graph goes on from them, is not written yet), which LangGraph runs again.
 */
export function shownAtMovedHead(writes: readonly { taskId: string; channel: string }[], undone: Undone): boolean[] {
  const waited = new Set(writes.filter((w) => isWait(w.channel)).map((w) => w.taskId));
  const finishedBefore = (w: { taskId: string; channel: string }) =>
    undone !== "calls" && waited.size > 0 && !isSpecialChannel(w.channel) && !waited.has(w.taskId);
  const given = (w: { taskId: string; channel: string }) =>
    typeof undone !== "string" && w.channel === RESUME && undone.fresh.has(w.taskId);
  const stored = (w: { taskId: string; channel: string }) =>
    typeof undone !== "string" && undone.results === "stored" && !isSpecialChannel(w.channel);
  return writes.map((w) => isWait(w.channel) || given(w) || finishedBefore(w) || stored(w));
}

/** The pending writes a head moved to their checkpoint shows (`shownAtMovedHead`). */
export function pendingAtMovedHead(writes: CheckpointPendingWrite[], undone: Undone): CheckpointPendingWrite[] {
  const shown = shownAtMovedHead(
    writes.map(([taskId, channel]) => ({ taskId, channel })),
    undone,
  );
  return writes.filter((_, i) => shown[i]);
}

/**
 * Whether a tool call that succeeded in a stored checkpoint's step (after it on its branch, up to the next LangGraph
 * checkpoint written there: where its tasks journal theirs) is not in the world at `position` of `branch`: off that
 * lineage, or undone on it (a rollback to the checkpoint undid them). `points`: the session's LangGraph checkpoints.
 * When that world leaves the checkpoint's branch at a point after it (a user's checkpoint taken while the step was
 * stopped, or the entries the world keeps), only the calls up to that point count: those after it came later (a task
 * resumed or retried there, the app's own call), and leaving them out does not undo what finished before it.
 */
export function* callsLeftOut(
  tx: Tx,
  sessionId: string,
  row: LgCheckpointRow,
  points: LgPointRow[],
  branch: BranchRow,
  position: number,
): Step<boolean> {
  const at = points.find((p) => p.checkpointId === row.checkpointId);
  const head = at && (yield* tx.branchHeads(sessionId)).get(at.branchId);
  if (!at || head === undefined) return false;
  const later = points.filter((p) => p.branchId === at.branchId && p.position >= at.position && p.seq > at.seq);
  const kept = yield* keptOf(tx, at, yield* tx.lineage(branch.id, position));
  if (kept === "after") return false;
  // Up to the point the world keeps of the branch, when that is past the checkpoint: what came after it came later.
  const upTo = Math.min(head, kept > at.position ? kept : Infinity, ...later.map((p) => p.position));
  if (upTo <= at.position) return false;
  const step = { branchId: at.branchId, after: at.position, upTo };
  const calls = (yield* tx.segmentTools(step)).filter((t) => t.status === "succeeded");
  if (calls.length === 0) return false;
  const unapplied = new Set(yield* tx.unappliedTools(step));
  return calls.some((t) => t.position > kept || unapplied.has(t.id));
}

/**
 * Whether the step of a stored checkpoint went on after a user's checkpoint taken while it was stopped, and a move
 * back to that checkpoint left it out: the lineage leaves the checkpoint's branch within the step from that user's
 * checkpoint (`leftWithin`: right at its position, or past the calls tasks beside the stopped one journaled before
 * it), the step stopped there (an interrupt or an error written), and the branch holds a call of the step past that
 * point. Those calls came from tasks resumed or retried after the user's checkpoint: the resume values stored since
 * (LangGraph writes no checkpoint while a task asks again in the same step) are not the head's, nor what those tasks
 * wrote; the step shows what a moved-to checkpoint the graph went on from shows ("stopped"). Once a call of the step
 * lands on the lineage past the move (the thread ran there again: "ran"), the results stored are that run's, and are
 * served; of the resume values, those given since (`resumed-on.ts`).
 */
export function* resumedPastUserCheckpoint(
  tx: Tx,
  sessionId: string,
  row: LgCheckpointRow,
  points: LgPointRow[],
  branch: BranchRow,
  position: number,
): Step<"stopped" | "ran" | false> {
  const at = points.find((p) => p.checkpointId === row.checkpointId);
  const head = at && (yield* tx.branchHeads(sessionId)).get(at.branchId);
  if (!at || head === undefined) return false;
  const segments = yield* tx.lineage(branch.id, position);
  const left = yield* leftWithin(tx, at, segments);
  if (left === undefined) return false;
  const later = points.filter((p) => p.branchId === at.branchId && p.position >= at.position && p.seq > at.seq);
  const upTo = Math.min(head, ...later.map((p) => p.position));
  const calls = upTo > left ? yield* tx.segmentTools({ branchId: at.branchId, after: left, upTo }) : [];
  const writes = yield* tx.langgraph.writesOf(sessionId, row.checkpointId);
  // Past the point: a call of the step, or an answer stored on the branch once the user's checkpoint was taken (a task
  // that asked again with no call between journals nothing).
  if (!calls.some((t) => t.status === "succeeded") && !(yield* answeredPast(tx, writes, at, segments))) return false;
  // The step stopped there (an interrupt or an error): its tasks were resumed or retried past the user's checkpoint.
  if (!writes.some((w) => isWait(w.channel))) return false;
  // A task ran since the move and made its call on the lineage: the results stored since are that run's.
  for (const segment of segments.slice(segments.findIndex((x) => x.branchId === at.branchId) + 1)) {
    if ((yield* tx.segmentTools(segment)).some((t) => t.status === "succeeded")) return "ran";
  }
  return "stopped";
}

/**
 * Whether resume values at the checkpoint (`writes`, its pending writes) were stored on its branch (`at`) once the
 * forkpoint checkpoint the lineage leaves that branch from was taken: their mark (those kept aside too, written over
 * by a run on another branch since) names the session's newest checkpoint then, that one or a later one (by its seq:
 * `markSeq`, kept in the mark once that checkpoint is gone).
 */
function* answeredPast(tx: Tx, writes: readonly LgWriteRow[], at: LgPointRow, segments: LineageSegment[]): Step<boolean> {
  const marks = writes.filter((w) => w.channel === RESUMED_ON).map((w) => parseResumeMark(w.value));
  const after = marks.filter((m) => m.branchId === at.branchId && m.after !== undefined);
  if (after.length === 0) return false;
  const next = segments[segments.findIndex((s) => s.branchId === at.branchId) + 1];
  const forkId = next ? (yield* tx.getBranch(next.branchId))?.forkCheckpointId : undefined;
  const fork = forkId ? yield* tx.getCheckpoint(forkId) : undefined;
  if (!fork) return false;
  for (const mark of after) if ((yield* markSeq(tx, fork.sessionId, mark)) >= fork.seq) return true;
  return false;
}

/**
 * Where a lineage leaves the branch of a LangGraph checkpoint (`at`) from a forkpoint checkpoint written after it (a
 * user's, taken while the step was stopped, or LangGraph's own): right at its position (`keptOf` "after"), or past it (calls of tasks
 * that ran beside the stopped one came before the user's checkpoint); undefined when the lineage ends on that branch,
 * does not hold it, or leaves it by an edit's fork. Past the step (a later LangGraph checkpoint of the branch at or
 * before that point) is for the caller to weigh.
 */
function* leftWithin(tx: Tx, at: LgPointRow, segments: LineageSegment[]): Step<number | undefined> {
  const kept = yield* keptOf(tx, at, segments);
  if (kept === "after") return at.position;
  if (kept < at.position) return undefined;
  const next = segments[segments.findIndex((s) => s.branchId === at.branchId) + 1];
  const forkId = next ? (yield* tx.getBranch(next.branchId))?.forkCheckpointId : undefined;
  // A rollback to LangGraph's own checkpoint of the step leaves right at it, as one to a user's taken there does.
  if (kept === at.position) return forkId === at.fpCheckpointId ? at.position : undefined;
  const fork = forkId ? yield* tx.getCheckpoint(forkId) : undefined;
  return fork && fork.seq > at.seq ? kept : undefined;
}

/**
 * How far a lineage keeps the branch of a LangGraph checkpoint (`at`): the position (-1: not at all), or "after" when
 * it leaves right at the checkpoint's position from a forkpoint checkpoint written after it (a user's, taken while the
 * step was stopped before any call of its tasks): nothing the step journaled came before that point.
 */
function* keptOf(tx: Tx, at: LgPointRow, segments: LineageSegment[]): Step<number | "after"> {
  const i = segments.findIndex((s) => s.branchId === at.branchId);
  const upTo = segments[i]?.upTo ?? -1;
  const next = segments[i + 1];
  if (upTo !== at.position || !next) return upTo;
  const forkId = (yield* tx.getBranch(next.branchId))?.forkCheckpointId;
  const fork = forkId ? yield* tx.getCheckpoint(forkId) : undefined;
  return fork && fork.id !== at.fpCheckpointId && fork.seq > at.seq ? "after" : upTo;
}
