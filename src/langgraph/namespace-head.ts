// A subgraph namespace's head while its parent graph's thread stands at a head it was moved to: as the subgraph waited.
import { ERROR, INTERRUPT, type CheckpointPendingWrite, type SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { ownedCurrent } from "../sessions/langgraph-bridge.js";
import type { LgCheckpointRow, LgThreadRow, LgWriteRow, Step, Tx } from "../store/port/index.js";
import { sortedWrites } from "./saver-parts.js";
import { asFirstAsked, firstAskedAt } from "./first-asked.js";
import { callsUndone, firstsAsked, type Undone } from "./moved-head-writes.js";
import { resumedOnBranch, rootBranchOf } from "./resumed-on.js";
import { undoneAt } from "./served-writes.js";
import { checkpointAt, type PointCheckpoint } from "./thread-head.js";
import { memoryParentNs, memoryServed } from "./subgraph-memory.js";
import { parentNs, taskOfNs, isWaitWrite, WHOLE_STEP, waitWindows, chosenWait, waitsOf, type WaitWindow } from "./namespace-waits.js";

/** A namespace's head read through its parent's: the checkpoint served (none: it runs anew), and what is undone there. */
export interface NamespaceHead {
  at: PointCheckpoint | undefined;
  undone: Undone;
  /** What the parent's head keeps of the step (`waitWindows`): its subgraphs' waits are weighed by the same. */
  windows: readonly WaitWindow[];
}

/**
 * The head of namespace `ns` (a subgraph's, named by its task: `node:taskId`) when the head of the namespace it runs
 * in is a stored checkpoint the session was moved to, with its continuation or its step's calls undone (`undoneAt`);
 * null otherwise (the namespace's own head is served). The subgraph's task was prepared from that checkpoint (its
 * task id comes from the checkpoint's), so every checkpoint of the namespace belongs to that step: the head is then
 * the one that holds an interrupt or an error (where the subgraph waited as its parent's step stopped) the parent's
 * lineage keeps last (`chosenWait`: the newest written before the user's checkpoint a rollback went to, not one the
 * subgraph reached after it; the first when the rollback went to the parent's checkpoint itself), with only what it
 * waited on and what finished before that served; none when the subgraph never waited (it runs anew). A moved head
 * with nothing left undone there (`prune` deleted the continuation, and with it what the step's resumed tasks wrote)
 * still takes the subgraph back to where it waited when the subgraph went on past that: its task is pending there
 * again, so what the subgraph did after its wait is no longer the parent's.
 */
export function* headThroughParent(tx: Tx, userId: string, threadId: string, ns: string): Step<NamespaceHead | null> {
  const through = yield* throughParent(tx, userId, threadId, ns);
  return through && through.undone !== null ? { at: through.at, undone: through.undone, windows: through.windows } : null;
}

/** A namespace's place when a move took its head (or its parent's) back: what `headThroughParent` serves, or its own. */
export interface MovedPlace {
  at: PointCheckpoint | undefined;
  /** Null: nothing undone there, the namespace's own head is served (its subgraphs still follow `windows`). */
  undone: Undone | null;
  windows: readonly WaitWindow[];
}

/**
 * Where namespace `ns` stands when its parent's head (its own, or its parent's through theirs) is where a move took
 * it: as `headThroughParent`, but with nothing undone (`undone` null) too, when the namespace's own head is served
 * there; null when no move stands above it.
 */
export function* throughParent(tx: Tx, userId: string, threadId: string, ns: string): Step<MovedPlace | null> {
  const up = parentNs(ns);
  if (up === undefined) return null;
  const parent = yield* tx.langgraph.getThread(userId, threadId, up);
  if (!parent) return null;
  const moved =
    (yield* throughParent(tx, userId, threadId, up)) ??
    (memoryParentNs(up) !== undefined ? yield* memoryHead(tx, parent) : null) ??
    (yield* movedHead(tx, parent));
  if (moved === null || moved.at?.kind !== "stored") return null;
  const thread = yield* tx.langgraph.getThread(userId, threadId, ns);
  if (!thread) return null;
  const chosen = chosenWait(yield* waitsOf(tx, thread.sessionId), moved.windows);
  if (chosen) {
    const newest = (yield* tx.langgraph.getCheckpoint(thread.sessionId))?.checkpointId;
    // Resumed there on the root's branch since the move: its resume values stored since are served (`Resumed`).
    const branchId = moved.undone === null ? undefined : yield* rootBranchOf(tx, thread);
    const fresh =
      branchId === undefined ? new Set<string>() : yield* resumedOnBranch(tx, thread.sessionId, chosen.row.checkpointId, branchId);
    // Nothing undone, and the subgraph's newest is where it waited: its own head is that already. Its parent's step
    // ran since the move with nothing else undone: so did it, its results are served as its parent's are. The move
    // undid the step's calls (its parent resumed since or not): a call names no task, so its finished tasks run again.
    const isNewest = chosen.row.checkpointId === newest;
    const ran = isNewest && moved.undone !== null && typeof moved.undone !== "string" && moved.undone.results === "stored";
    const undone: Undone | null = ran
      ? { fresh, results: "stored" }
      : fresh.size > 0
        ? { fresh }
        : moved.undone === null && isNewest
          ? null
          : callsUndone(moved.undone)
            ? "calls"
            : "continuation";
    return { at: { kind: "stored", row: chosen.row, moved: true }, undone, windows: moved.windows };
  }
  return moved.undone === null ? null : { at: undefined, undone: moved.undone, windows: moved.windows };
}

/** The thread's head when it is a checkpoint the session was moved to, with what is undone there (null: nothing). */
function* movedHead(tx: Tx, thread: LgThreadRow): Step<MovedPlace | null> {
  const { branch, head } = yield* ownedCurrent(tx, thread.sessionId, thread.userId);
  const at = yield* checkpointAt(tx, thread.sessionId, branch, head.position);
  if (at?.moved !== true) return null;
  const points = yield* tx.langgraph.pointsOf(thread.sessionId);
  const point = at.kind === "stored" ? points.find((p) => p.checkpointId === at.row.checkpointId) : undefined;
  const windows = point ? yield* waitWindows(tx, point, yield* tx.lineage(branch.id, head.position)) : WHOLE_STEP;
  return { at, undone: yield* undoneAt(tx, thread, at, { branch, head, points }), windows };
}

/**
 * A `checkpointer: true` subgraph's head when its parent's lineage serves it elsewhere than its own (`memoryServed`: a
 * move of the root took it back; its own session is never moved), with the windows of the root's step it was written
 * in; null otherwise. A plain subgraph it runs (named by a task of the step served again) waits there as it did then.
 */
function* memoryHead(tx: Tx, thread: LgThreadRow): Step<MovedPlace | null> {
  const { branch, head } = yield* ownedCurrent(tx, thread.sessionId, thread.userId);
  const at = yield* checkpointAt(tx, thread.sessionId, branch, head.position);
  if (at?.kind !== "stored" || at.moved === true) return null;
  const served = yield* memoryServed(tx, thread.userId, thread.threadId, thread.checkpointNs, thread.sessionId, at.row);
  if (!served?.place.row || served.place.undone === null) return null;
  return { at: { kind: "stored", row: served.place.row, moved: true }, undone: served.place.undone, windows: served.windows };
}

/**
 * For a namespace's head served at a stored checkpoint a move took it to (`row`, its own or through its parent's),
 * the waits its subgraphs are served at (`throughParent`), by the id of the task that runs them: their interrupts
 * and errors there. The parent's own writes for that task name the subgraph's last wait (LangGraph replaces a task's
 * interrupt when it waits again in the same step), which may be a later one: a read shows these instead.
 */
export function* subgraphWaits(
  tx: Tx,
  userId: string,
  threadId: string,
  ns: string,
  row: LgCheckpointRow,
): Step<Map<string, LgWriteRow[]>> {
  const waits = new Map<string, LgWriteRow[]>();
  const tasks = new Set(
    (yield* tx.langgraph.writesOf(row.sessionId, row.checkpointId)).filter((w) => isWaitWrite(w.channel)).map((w) => w.taskId),
  );
  if (tasks.size === 0) return waits;
  for (const sessionId of yield* tx.langgraph.threadSessions(userId, threadId)) {
    const sub = sessionId === row.sessionId ? undefined : yield* tx.langgraph.threadOfSession(sessionId);
    const task = sub && parentNs(sub.checkpointNs) === ns ? taskOfNs(sub.checkpointNs) : undefined;
    if (!sub || task === undefined || !tasks.has(task)) continue;
    const head = yield* throughParent(tx, userId, threadId, sub.checkpointNs);
    if (head?.at?.kind !== "stored") continue;
    // As the subgraph's own head shows them: its subgraphs' in place of its tasks' (a subgraph inside a subgraph).
    const inner = yield* subgraphWaits(tx, userId, threadId, sub.checkpointNs, head.at.row);
    const stored = (yield* sortedWrites(tx, sessionId, head.at.row.checkpointId)).filter((w) => isWaitWrite(w.channel));
    // Served with its resume values left out (`undone`): its tasks ask their first questions of the step again (but
    // those resumed since the move).
    const firsts = head.undone === null ? new Map<string, LgWriteRow>() : yield* firstAskedAt(tx, sessionId, head.at.row.checkpointId);
    const written = asFirstAsked(stored, firstsAsked(firsts, head.undone));
    const shown = [...written.filter((w) => !inner.has(w.taskId)), ...[...inner.values()].flat()];
    waits.set(task, [...(waits.get(task) ?? []), ...shown]);
  }
  return waits;
}

/**
 * The pending writes with each task's interrupts and errors replaced by those its subgraph is served at
 * (`subgraphWaits`): its interrupts as one write (LangGraph's task writes a subgraph's interrupts so), its error.
 */
export async function withSubgraphWaits(
  serde: SerializerProtocol,
  writes: CheckpointPendingWrite[],
  waits: Map<string, LgWriteRow[]>,
): Promise<CheckpointPendingWrite[]> {
  const out = writes.filter(([taskId, channel]) => !(waits.has(taskId) && isWaitWrite(channel)));
  for (const [taskId, rows] of waits) {
    const interrupts: unknown[] = [];
    for (const w of rows) {
      const value: unknown = await serde.loadsTyped(w.type, w.value);
      if (w.channel === INTERRUPT) interrupts.push(...(Array.isArray(value) ? value : [value]));
      else if (w.channel === ERROR) out.push([taskId, ERROR, value]);
    }
    if (interrupts.length > 0) out.push([taskId, INTERRUPT, interrupts]);
  }
  return out;
}
