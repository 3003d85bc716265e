// Where a task's results at a checkpoint were stored: a task run again there after a move replaces the undone run's.
import { RESUME, type CheckpointPendingWrite, type SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { isSpecialChannel } from "./special-channels.js";
import { WRITTEN_ON, markSeq, ownedCurrent } from "../sessions/langgraph-bridge.js";
import type { LgThreadRow, LgWriteRow, LineageSegment, Step, Tx } from "../store/port/index.js";
import { checkpointAt } from "./thread-head.js";

/**
 * The channel and index of a task's mark at a checkpoint: where its results (regular writes) there were stored, as the
 * branch and head position of the session of the thread's root graph (a subgraph's session is never moved). LangGraph
 * writes a task's results once per checkpoint (a retry's are dropped as copies), but a move back to the checkpoint
 * leaves the results of the run it undid stored, under the very keys the task's next run writes: only the mark tells
 * them apart. Never served as a write of its own (`sortedWrites` leaves it out).
 */
export { WRITTEN_ON };
export const WRITTEN_ON_IDX = -1005;

/** The prefix of the task ids a task's replaced rows are kept under (`markWrittenOn`); never a LangGraph task id. */
export const PRIOR = "__forkpoint_prior__|";

/** The task id a task's rows replaced by a run on another branch are kept under, by the branch they were stored on. */
const priorTaskId = (taskId: string, branchId: string) => `${PRIOR}${branchId}|${taskId}`;

/** Where results were stored: the root session's branch, its head's position then, and its newest checkpoint then. */
interface Mark {
  branchId: string;
  position: number;
  /** Its id (ids, unlike seqs, survive an export): absent on marks kept before it was, or when there was none. */
  after?: string;
  /** That checkpoint's seq, which orders the results once it is gone (`markSeq`); absent on marks kept before it was. */
  seq?: number;
}

const isRegular = (channel: string) => !isSpecialChannel(channel);

/** The root graph's thread of `thread` (itself when it is the root's). */
function* rootOf(tx: Tx, thread: LgThreadRow): Step<LgThreadRow | undefined> {
  return thread.checkpointNs === "" ? thread : yield* tx.langgraph.getThread(thread.userId, thread.threadId, "");
}

/**
 * Marks a task's results among `rows` (one task's writes, about to be stored in `thread`) with where they are stored,
 * and tells whether they replace those stored: yes when the task's results there were stored on another branch (by a
 * run a move undid or left), so the task ran again since and its new results are the ones that count; the old ones
 * the new do not write over are deleted. Rows stored before marks were kept have none: they stay, as they did.
 */
export function* markWrittenOn(tx: Tx, thread: LgThreadRow, rows: readonly Omit<LgWriteRow, "sessionId">[]): Step<boolean> {
  const first = rows.find((r) => isRegular(r.channel));
  const root = first && (yield* rootOf(tx, thread));
  if (!first || !root) return false;
  const { branch, head } = yield* ownedCurrent(tx, root.sessionId, root.userId);
  const stored = (yield* tx.langgraph.writesOf(thread.sessionId, first.checkpointId)).filter((w) => w.taskId === first.taskId);
  const mark = stored.find((w) => w.channel === WRITTEN_ON);
  // Regular writes have an index of their own (from 0); LangGraph's special ones and the saver's marks, negative ones.
  const results = stored.filter((w) => w.idx >= 0);
  const replace = results.length > 0 && mark !== undefined && (JSON.parse(mark.value.toString("utf8")) as Mark).branchId !== branch.id;
  if (results.length > 0 && !replace) return false;
  // The rows replaced are kept aside (under a task id of their own, never served as one): a lineage that holds the
  // run that wrote them (a switch back to its branch) is served them still (`servedWritten`).
  if (replace) {
    const prior = stored.filter((w) => w.idx >= 0 || w.channel === WRITTEN_ON || w.channel === RESUME);
    const kept = priorTaskId(first.taskId, (JSON.parse(mark.value.toString("utf8")) as Mark).branchId);
    yield* tx.langgraph.insertWrites(
      prior.map((w) => ({ ...w, taskId: kept })),
      true,
    );
  }
  // At time 0 every checkpoint is live: the newest one, expired or not, is what a later fork's checkpoint comes after.
  const newest = yield* tx.liveCheckpointAt(root.userId, root.sessionId, 0, 0);
  const value = Buffer.from(
    JSON.stringify({ branchId: branch.id, position: head.position, after: newest?.id, seq: newest?.seq } satisfies Mark),
  );
  yield* tx.langgraph.insertWrites(
    [{ ...first, sessionId: thread.sessionId, idx: WRITTEN_ON_IDX, channel: WRITTEN_ON, type: "json", value }],
    true,
  );
  const kept = new Set(rows.map((r) => r.idx));
  const gone = results.filter((w) => !kept.has(w.idx));
  if (gone.length > 0) yield* tx.langgraph.deleteWrites(thread.sessionId, gone);
  return replace;
}

/**
 * The branch the root graph's step at its head ran on first, when that head is a stored checkpoint the session was
 * moved to: a subgraph's head served through it belongs to that step, so its tasks' results stored on the root's
 * current branch since are weighed as the root's own (`writtenAt`).
 */
export function* subgraphStepBranch(tx: Tx, userId: string, threadId: string): Step<string | undefined> {
  const root = yield* tx.langgraph.getThread(userId, threadId, "");
  if (!root) return undefined;
  const { branch, head } = yield* ownedCurrent(tx, root.sessionId, root.userId);
  const at = yield* checkpointAt(tx, root.sessionId, branch, head.position);
  if (at?.kind !== "stored" || at.moved !== true) return undefined;
  return (yield* tx.langgraph.pointOf(root.sessionId, at.row.checkpointId))?.branchId;
}

/** Of a checkpoint's tasks with marked results: those run again since a move (`on`), and those a move left (`off`). */
export interface Written {
  /** Stored on the root's current branch, which is not the branch the step ran on first: served as done. */
  on: ReadonlySet<string>;
  /** Stored where the root's current lineage does not reach: a run a move undid or left wrote them; never served. */
  off: ReadonlySet<string>;
  /** Of the tasks `off`, the rows a run the lineage holds stored before they were replaced: served in their place. */
  prior: ReadonlyMap<string, LgWriteRow[]>;
}

/**
 * The tasks of a stored checkpoint of `thread` whose results are `Written` on or off the root session's current
 * lineage; `stepBranch`: the branch of the root's session the step ran on first (the root's own checkpoints only);
 * `wentOn`: the head was moved to the checkpoint and the graph went on from it (`undoneAt`'s "continuation"). Undefined
 * when no task's results are marked off the current branch (nothing to weigh).
 */
export function* writtenAt(
  tx: Tx,
  thread: LgThreadRow,
  checkpointId: string,
  stepBranch?: string,
  wentOn = false,
): Step<Written | undefined> {
  const rows = yield* tx.langgraph.writesOf(thread.sessionId, checkpointId);
  const marks = rows.filter((w) => w.channel === WRITTEN_ON);
  const root = marks.length > 0 ? yield* rootOf(tx, thread) : undefined;
  if (!root) return undefined;
  const { branch, head } = yield* ownedCurrent(tx, root.sessionId, root.userId);
  const parsed = marks.map((w) => ({ taskId: w.taskId, mark: JSON.parse(w.value.toString("utf8")) as Mark }));
  const live = parsed.filter((m) => !m.taskId.startsWith(PRIOR));
  const here = live.every((m) => m.mark.branchId === branch.id);
  if (here && (stepBranch === undefined || stepBranch === branch.id)) return undefined;
  const segments = yield* tx.lineage(branch.id, head.position);
  const on = new Set<string>();
  const off = new Set<string>();
  const prior = new Map<string, LgWriteRow[]>();
  for (const { taskId, mark } of live) {
    if (!(yield* heldBy(tx, segments, mark))) off.add(taskId);
    // Stored on the current branch since a move, or before the point a move forked the lineage from (a user's
    // checkpoint taken once the task finished): the lineage holds the run that wrote them.
    else if (stepBranch !== undefined && stepBranch !== branch.id) on.add(taskId);
    // On the step's own branch, where the graph went on only from a branch forked past these results (the lineage
    // holds them, and the other branch's are off it): this branch's run finished the task, as it left it.
    else if (wentOn && stepBranch === branch.id) on.add(taskId);
  }
  // A task's rows a later run replaced, stored by a run the lineage holds: served in place of the live ones.
  for (const { taskId, mark } of parsed) {
    const task = taskId.slice(taskId.lastIndexOf("|") + 1);
    if (!taskId.startsWith(PRIOR) || !off.has(task) || !(yield* heldBy(tx, segments, mark))) continue;
    prior.set(
      task,
      rows.filter((w) => w.taskId === taskId && (w.idx >= 0 || w.channel === RESUME)).map((w) => ({ ...w, taskId: task })),
    );
  }
  return on.size > 0 || off.size > 0 ? { on, off, prior } : undefined;
}

/**
 * Whether a lineage (`segments`) holds the run that stored results marked `mark`: it keeps the mark's branch past the
 * mark's position, or up to it and then stays there or forks from a checkpoint written after the results were stored
 * (a user's taken once the task finished); a fork from one written before (the wait the task was answered at) leaves
 * the run out, however often the session moves back there.
 */
function* heldBy(tx: Tx, segments: readonly LineageSegment[], mark: Mark): Step<boolean> {
  const i = segments.findIndex((s) => s.branchId === mark.branchId);
  const segment = segments[i];
  if (!segment || mark.position > segment.upTo) return false;
  const next = segments[i + 1];
  if (mark.position < segment.upTo || !next || mark.after === undefined) return true;
  const forkId = (yield* tx.getBranch(next.branchId))?.forkCheckpointId;
  const fork = forkId ? yield* tx.getCheckpoint(forkId) : undefined;
  // By the newest checkpoint's seq, kept in the mark once it is gone (`markSeq`): a mark that tells no order (one kept
  // before seqs were, or a copied session's) leaves the lineage holding the run, as it did.
  return !fork || fork.seq > (yield* markSeq(tx, fork.sessionId, mark));
}

/**
 * The pending writes served at a checkpoint (`shown`, what a move left of `all`), weighed by `Written`: the results of
 * the tasks run again since the move are served (they finished there), and those a move left are not.
 */
export async function servedWritten(
  serde: SerializerProtocol,
  all: CheckpointPendingWrite[],
  shown: CheckpointPendingWrite[],
  written: Written,
): Promise<CheckpointPendingWrite[]> {
  const kept = new Set(shown);
  const out = all.filter(([taskId, channel], i) => {
    // A task's resume values are weighed by where they were stored (`resumed-on.ts`), but for those kept aside with it.
    if (written.off.has(taskId) && (isRegular(channel) || (channel === RESUME && written.prior.has(taskId)))) return false;
    if (!isRegular(channel)) return kept.has(all[i]!);
    return kept.has(all[i]!) || written.on.has(taskId);
  });
  for (const rows of written.prior.values()) {
    for (const w of rows) out.push([w.taskId, w.channel, await serde.loadsTyped(w.type, w.value)]);
  }
  return out;
}
