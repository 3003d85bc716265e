// Resume values a run on another branch wrote over: kept aside, and served again to the lineage that gave them.
import { INTERRUPT, RESUME, type CheckpointPendingWrite, type SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { markSeq, ownedCurrent, parseResumeMark } from "../sessions/langgraph-bridge.js";
import type { LgThreadRow, LgWriteRow, LineageSegment, Step, Tx } from "../store/port/index.js";
import { RESUMED_ON, rootBranchOf } from "./resumed-on.js";
import { PRIOR } from "./written-on.js";

/** The prefix of the task ids resume values written over are kept under (never a LangGraph task id: `PRIOR`'s). */
const ASIDE = `${PRIOR}resumed|`;

/** The task id a task's resume values stored on `branchId` are kept under once a run on another branch replaces them. */
const asideTaskId = (taskId: string, branchId: string) => `${ASIDE}${branchId}|${taskId}`;

const branchOfMark = (w: LgWriteRow) => parseResumeMark(w.value).branchId;

/**
 * Keeps aside the stored resume values the RESUME rows among `rows` (about to replace them in `thread`) write over,
 * when they were stored on another branch of the root's session than the current one: LangGraph stores a task's resume
 * values at one key, so a resume on one branch would otherwise take the other branch's answers from it. The task's
 * interrupt stored then goes with them: the question it asked after those answers, which a lineage served them shows.
 */
export function* keepResumedAside(tx: Tx, thread: LgThreadRow, rows: readonly Omit<LgWriteRow, "sessionId">[]): Step<void> {
  const resumed = rows.filter((r) => r.channel === RESUME);
  if (resumed.length === 0) return;
  const branchId = yield* rootBranchOf(tx, thread);
  if (branchId === undefined) return;
  const stored = yield* tx.langgraph.writesOf(thread.sessionId, resumed[0]!.checkpointId);
  for (const taskId of new Set(resumed.map((r) => r.taskId))) {
    const mark = stored.find((w) => w.taskId === taskId && w.channel === RESUMED_ON);
    if (!mark || branchOfMark(mark) === branchId) continue;
    const kept = asideTaskId(taskId, branchOfMark(mark));
    const prior = stored.filter(
      (w) => w.taskId === taskId && (w.channel === RESUME || w.channel === RESUMED_ON || w.channel === INTERRUPT),
    );
    yield* tx.langgraph.insertWrites(
      prior.map((w) => ({ ...w, taskId: kept })),
      true,
    );
  }
}

/**
 * The tasks of a stored checkpoint of `thread` whose resume values there were last stored on a branch the root's
 * current lineage does not reach, or reaches only up to a checkpoint taken before them (`reachedBy`; a run on another
 * branch wrote over them), each with the resume values the lineage gave it there and the interrupt it asked after them
 * (kept aside by `keepResumedAside`; none when it gave none): what a head that was not moved serves. A head moved there (`moved`) gets back only those given on its own branch.
 */
export function* resumedOffLineage(tx: Tx, thread: LgThreadRow, checkpointId: string, moved: boolean): Step<Map<string, LgWriteRow[]>> {
  const rows = yield* tx.langgraph.writesOf(thread.sessionId, checkpointId);
  const marks = rows.filter((w) => w.channel === RESUMED_ON);
  const swaps = new Map<string, LgWriteRow[]>();
  if (marks.length === 0) return swaps;
  const root = thread.checkpointNs === "" ? thread : yield* tx.langgraph.getThread(thread.userId, thread.threadId, "");
  if (!root) return swaps;
  const { branch, head } = yield* ownedCurrent(tx, root.sessionId, root.userId);
  const segments = yield* tx.lineage(branch.id, head.position);
  // Nearest first: the current branch's own answers, then those of the branches it forked from.
  const order = [...segments].map((s) => s.branchId).sort((a, b) => (a === branch.id ? -1 : b === branch.id ? 1 : 0));
  const reached = yield* reachedUpTo(tx, segments);
  for (const mark of marks.filter((w) => !w.taskId.startsWith(PRIOR))) {
    // A head moved there weighs resume values by the branch they were stored on (`resumedOnBranch`): only its own
    // branch's, written over since, are brought back.
    if (moved ? branchOfMark(mark) === branch.id : yield* reachedBy(tx, root.sessionId, reached, parseResumeMark(mark.value))) continue;
    const from = (moved ? [branch.id] : order).find((b) => rows.some((w) => w.taskId === asideTaskId(mark.taskId, b)));
    if (moved && from === undefined) continue;
    const aside = from === undefined ? [] : rows.filter((w) => w.taskId === asideTaskId(mark.taskId, from));
    const kept = aside.filter((w) => w.channel === RESUME || w.channel === INTERRUPT);
    swaps.set(
      mark.taskId,
      kept.map((w) => ({ ...w, taskId: mark.taskId })),
    );
  }
  return swaps;
}

/**
 * For each branch of a lineage (`segments`), the seq of the checkpoint the lineage leaves it from (the next segment's
 * fork): resume values stored on it once that checkpoint was taken came after it, which the lineage does not hold
 * (Infinity: the lineage's own last branch, or a fork at no checkpoint).
 */
function* reachedUpTo(tx: Tx, segments: readonly LineageSegment[]): Step<Map<string, number>> {
  const reached = new Map<string, number>();
  for (const [i, segment] of segments.entries()) {
    const next = segments[i + 1];
    const forkId = next ? (yield* tx.getBranch(next.branchId))?.forkCheckpointId : undefined;
    const fork = forkId ? yield* tx.getCheckpoint(forkId) : undefined;
    reached.set(segment.branchId, fork?.seq ?? Infinity);
  }
  return reached;
}

/**
 * Whether the lineage (`reached`, `reachedUpTo`) holds resume values marked `mark`: stored on one of its branches
 * before the checkpoint it leaves that branch from (a rollback to a user's checkpoint taken at a memory subgraph's
 * wait leaves out the answers given there since, though the subgraph's checkpoint stays its head).
 */
type ResumeMark = ReturnType<typeof parseResumeMark>;

function* reachedBy(tx: Tx, sessionId: string, reached: ReadonlyMap<string, number>, mark: ResumeMark): Step<boolean> {
  const upTo = reached.get(mark.branchId);
  if (upTo === undefined) return false;
  return upTo === Infinity || (yield* markSeq(tx, sessionId, mark)) < upTo;
}

/**
 * Whether a task's swap (`resumedOffLineage`) gives it the lineage's answers: it runs on from them, so it shows the
 * question it asked after them, not its first of the step.
 */
export const answeredOnLineage = (swap: readonly LgWriteRow[] | undefined): boolean => swap?.some((w) => w.channel === RESUME) ?? false;

/**
 * `writes` with the resume values of the tasks in `swaps` (`resumedOffLineage`) replaced by the lineage's own, and the
 * interrupt by the one asked after them when it was kept (a task whose interrupt was not shows the one stored).
 */
export async function withLineageResumes(
  serde: SerializerProtocol,
  writes: CheckpointPendingWrite[],
  swaps: ReadonlyMap<string, LgWriteRow[]>,
): Promise<CheckpointPendingWrite[]> {
  const asked = new Set([...swaps].filter(([, rows]) => rows.some((w) => w.channel === INTERRUPT)).map(([taskId]) => taskId));
  const out = writes.filter(
    ([taskId, channel]) => !((channel === RESUME && swaps.has(taskId)) || (channel === INTERRUPT && asked.has(taskId))),
  );
  for (const rows of swaps.values()) {
    for (const w of rows) out.push([w.taskId, w.channel, await serde.loadsTyped(w.type, w.value)]);
  }
  return out;
}
