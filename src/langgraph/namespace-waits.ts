// The waits of a subgraph's namespace, and the windows of its parent's step that weigh them (which one a lineage keeps).
import { ERROR, INTERRUPT } from "@langchain/langgraph-checkpoint";
import type { LgCheckpointRow, LgPointRow, LineageSegment, Step, Tx } from "../store/port/index.js";
import { rootOrder } from "./root-order.js";

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
 * What a lineage keeps of a subgraph's step in its parent's namespace, as windows along the lineage: on the branch of
 * the parent's checkpoint (`at`), what was written up to the forkpoint checkpoint a further branch forks from at its
 * position or past it (a rollback to a user's checkpoint taken while the step was stopped, past the calls tasks beside
 * the stopped one journaled first, or to the LangGraph checkpoint itself); on each further branch, what was written
 * once that branch was made, up to the checkpoint the next forks from; the last, to the end of the step. A subgraph's waits in the step are its own session's checkpoints, so they are weighed by the global seq of
 * their forkpoint checkpoints (`upTo`) and by when they were written (`after`, ms: a branch made by a move has no seq).
 */
export interface WaitWindow {
  /** Written at or after this time (ms). */
  after: number;
  /** Its forkpoint checkpoint's seq at most this. */
  upTo: number;
}

/** The whole step: what a head the graph left there (or its newest checkpoint) keeps of it. */
export const WHOLE_STEP: readonly WaitWindow[] = [{ after: -Infinity, upTo: Infinity }];

/** A checkpoint of a subgraph's namespace where it waited, with its forkpoint checkpoint's seq and time. */
export interface NamespaceWait {
  row: LgCheckpointRow;
  seq: number;
  /** `seq` as the root's session orders it (`rootOrder`): what a window's `upTo` weighs. */
  rootSeq: number;
  at: number;
}

/**
 * The windows (`WaitWindow`) of the lineage `segments` (root first) for a step stopped at the parent's checkpoint
 * whose point is `at`; `last`: the seq the lineage's last segment stops at (a user's checkpoint read as a point, which
 * a rollback forks from), else none. The whole step when the lineage does not hold the checkpoint's branch.
 */
export function* waitWindows(tx: Tx, at: LgPointRow, segments: LineageSegment[], last?: number): Step<WaitWindow[]> {
  const i = segments.findIndex((s) => s.branchId === at.branchId);
  if (i < 0 || segments[i]!.upTo < at.position) return [...WHOLE_STEP];
  const windows: WaitWindow[] = [];
  for (let k = i; k < segments.length; k++) {
    const after = k === i ? -Infinity : ((yield* tx.getBranch(segments[k]!.branchId))?.createdAt ?? -Infinity);
    const next = segments[k + 1];
    // The lineage ends at this branch's head: the step went on there as far as it did.
    if (!next && last === undefined) {
      windows.push({ after, upTo: Infinity });
      break;
    }
    const forkId = next ? (yield* tx.getBranch(next.branchId))?.forkCheckpointId : undefined;
    const upTo = next ? (forkId ? (yield* tx.getCheckpoint(forkId))?.seq : undefined) : last;
    windows.push({ after, upTo: upTo ?? Infinity });
    if (upTo === undefined) break;
  }
  return windows;
}

/**
 * The wait a lineage's windows keep last: along them, the newest wait each window holds (what the subgraph waited at
 * as the session stood there); the step's first wait when none does (the lineage leaves before the subgraph waited:
 * the step's calls are undone, the subgraph waits where it first did).
 */
export function chosenWait(waits: readonly NamespaceWait[], windows: readonly WaitWindow[]): NamespaceWait | undefined {
  const newest = (a: NamespaceWait | undefined, x: NamespaceWait) => (!a || x.seq > a.seq ? x : a);
  let chosen: NamespaceWait | undefined;
  for (const w of windows)
    chosen = waits.filter((x) => x.rootSeq <= w.upTo && x.at >= w.after).reduce<NamespaceWait | undefined>(newest, undefined) ?? chosen;
  return chosen ?? waits.reduce<NamespaceWait | undefined>((first, x) => (!first || x.seq < first.seq ? x : first), undefined);
}

/** The checkpoints of a namespace's session where it waited (an interrupt or an error written there). */
export function* waitsOf(tx: Tx, sessionId: string): Step<NamespaceWait[]> {
  const waited = new Set((yield* tx.langgraph.writeKeysOf(sessionId)).filter((w) => isWaitWrite(w.channel)).map((w) => w.checkpointId));
  if (waited.size === 0) return [];
  const points = new Map((yield* tx.langgraph.pointsOf(sessionId)).map((p) => [p.checkpointId, p]));
  const order = yield* rootOrder(tx, sessionId);
  const waits: NamespaceWait[] = [];
  for (const row of yield* tx.langgraph.checkpointsOf(sessionId)) {
    const p = waited.has(row.checkpointId) ? points.get(row.checkpointId) : undefined;
    const cp = p && (yield* tx.getCheckpoint(p.fpCheckpointId));
    if (p && cp) waits.push({ row, seq: p.seq, rootSeq: order ? order(p.seq) : p.seq, at: cp.createdAt });
  }
  return waits;
}
