// A subgraph namespace's head while its parent graph's thread stands at a head it was moved to: as the subgraph waited.
import { ERROR, INTERRUPT } from "@langchain/langgraph-checkpoint";
import { ownedCurrent } from "../sessions/langgraph-bridge.js";
import type { LgThreadRow, Step, Tx } from "../store/port/index.js";
import type { Undone } from "./moved-head-writes.js";
import { undoneAt } from "./served-writes.js";
import { checkpointAt, type PointCheckpoint } from "./thread-head.js";

/** A namespace's head read through its parent's: the checkpoint served (none: it runs anew), and what is undone there. */
export interface NamespaceHead {
  at: PointCheckpoint | undefined;
  undone: Undone;
}

/**
 * The namespace a subgraph's runs in ("" for the root graph's), when a task names it (`node:taskId`, then `|1`, `|2`
 * for a node's further subgraphs); undefined for the root's own, and for a `checkpointer: true` subgraph's (no task id:
 * one history across its parent's steps).
 */
export function parentNs(ns: string): string | undefined {
  const segments = ns.replace(/\|\d+$/, "").split("|");
  return ns !== "" && segments.at(-1)!.includes(":") ? segments.slice(0, -1).join("|") : undefined;
}

/** The id of the parent's task a subgraph's namespace is named by (`node:taskId`); undefined as for `parentNs`. */
export function taskOfNs(ns: string): string | undefined {
  if (parentNs(ns) === undefined) return undefined;
  const named = ns.replace(/\|\d+$/, "");
  return named.slice(named.lastIndexOf(":") + 1);
}

/** Whether a pending write is one a namespace's head through its parent's waits on (`headThroughParent`). */
export const isWaitWrite = (channel: string): boolean => channel === INTERRUPT || channel === ERROR;

/**
 * The head of namespace `ns` (a subgraph's, named by its task: `node:taskId`) when the head of the namespace it runs
 * in is a stored checkpoint the session was moved to, with its continuation or its step's calls undone (`undoneAt`);
 * null otherwise (the namespace's own head is served). The subgraph's task was prepared from that checkpoint (its
 * task id comes from the checkpoint's), so every checkpoint of the namespace belongs to that step: the head is then
 * the newest that holds an interrupt or an error (where the subgraph waited as its parent's step stopped), with
 * only what it waited on and what finished before that served; none when the subgraph never waited (it runs anew).
 * A moved head with nothing left undone there (`prune` deleted the continuation, and with it what the step's resumed
 * tasks wrote) still takes the subgraph back to where it waited when the subgraph went on past that: its task is
 * pending there again, so what the subgraph did after its wait is no longer the parent's.
 */
export function* headThroughParent(tx: Tx, userId: string, threadId: string, ns: string): Step<NamespaceHead | null> {
  const up = parentNs(ns);
  if (up === undefined) return null;
  const parent = yield* tx.langgraph.getThread(userId, threadId, up);
  if (!parent) return null;
  const moved = (yield* headThroughParent(tx, userId, threadId, up)) ?? (yield* movedHead(tx, parent));
  if (moved === null || moved.at?.kind !== "stored") return null;
  const thread = yield* tx.langgraph.getThread(userId, threadId, ns);
  if (!thread) return null;
  const rows = (yield* tx.langgraph.checkpointsOf(thread.sessionId)).sort((a, b) => (a.checkpointId < b.checkpointId ? 1 : -1));
  for (const row of rows) {
    const writes = yield* tx.langgraph.writesOf(thread.sessionId, row.checkpointId);
    if (writes.some((w) => isWaitWrite(w.channel))) {
      // Nothing undone, and the subgraph's newest is where it waited: its own head is that already.
      if (moved.undone === null && row === rows[0]) return null;
      return { at: { kind: "stored", row, moved: true }, undone: "continuation" };
    }
  }
  return moved.undone === null ? null : { at: undefined, undone: moved.undone };
}

/** The thread's head when it is a checkpoint the session was moved to, with what is undone there (null: nothing). */
function* movedHead(tx: Tx, thread: LgThreadRow): Step<{ at: PointCheckpoint; undone: Undone | null } | null> {
  const { branch, head } = yield* ownedCurrent(tx, thread.sessionId, thread.userId);
  const at = yield* checkpointAt(tx, thread.sessionId, branch, head.position);
  if (at?.moved !== true) return null;
  return { at, undone: yield* undoneAt(tx, thread, at, { branch, head, points: yield* tx.langgraph.pointsOf(thread.sessionId) }) };
}
