// A `checkpointer: true` subgraph's memory as its parent's lineage holds it: a move of the parent takes it along.
import { ownedCurrent } from "../sessions/langgraph-bridge.js";
import type { LgCheckpointRow, LgPointRow, LgThreadRow, LineageSegment, Step, Tx } from "../store/port/index.js";
import { parentNs, waitsOf, waitWindows, WHOLE_STEP, type NamespaceWait, type WaitWindow } from "./namespace-waits.js";
import type { Undone } from "./moved-head-writes.js";
import { checkpointAt, onLineageAt } from "./thread-head.js";
import { putOffLineage } from "./put-on.js";
import { rootOrder } from "./root-order.js";
import { resumedAtMemoryPlace } from "./memory-resumed.js";

const utf8 = new TextDecoder();

/**
 * The namespace a `checkpointer: true` subgraph's namespace runs in (its node's name is its last segment, with no task
 * id: one history across its parent's steps); undefined for the root's and for a namespace named by a task.
 */
export function memoryParentNs(ns: string): string | undefined {
  if (ns === "" || parentNs(ns) !== undefined) return undefined;
  const segments = ns.replace(/\|\d+$/, "").split("|");
  return segments.slice(0, -1).join("|");
}

/**
 * The namespaces of the graphs above a `checkpointer: true` subgraph's namespace, nearest first, down to the root's
 * (""), as `memoryParentNs` names them: a plain subgraph between has none of its own (its namespace names its task).
 */
export function memoryAboveNs(ns: string): string[] {
  const up = memoryParentNs(ns);
  if (up === undefined) return [];
  const segments = up === "" ? [] : up.split("|");
  return segments.map((_, i) => segments.slice(0, segments.length - i).join("|")).concat("");
}

/**
 * The namespace whose lineage a `checkpointer: true` subgraph's memory follows, as its checkpoint `row` names its
 * graphs above (LangGraph's `metadata.parents`): its parent's, or when that parent is a plain subgraph (named by its
 * task, `mid:taskId`: its steps are its own parent's), the nearest graph above with a history of its own (the root's,
 * or a memory subgraph's). Undefined as for `memoryParentNs`.
 */
export function memoryLineageNs(ns: string, row: LgCheckpointRow): string | undefined {
  const up = memoryParentNs(ns);
  const parents = up === undefined ? undefined : parentsOf(row);
  if (up === undefined || !parents || Object.hasOwn(parents, up)) return up;
  const above = Object.keys(parents).filter((k) => parentNs(k) === undefined && (k === "" || up.startsWith(`${k}|`)));
  return above.reduce<string | undefined>((a, k) => (a === undefined || k.length > a.length ? k : a), undefined) ?? up;
}

/** LangGraph's `metadata.parents` of a checkpoint: the checkpoint of each graph above it, by namespace. */
function parentsOf(row: LgCheckpointRow): Record<string, unknown> | undefined {
  if (row.metadataType !== "json") return undefined;
  try {
    const metadata = JSON.parse(utf8.decode(row.metadata)) as { parents?: Record<string, unknown> } | null;
    return metadata?.parents ?? undefined;
  } catch {
    return undefined;
  }
}

/** The parent's checkpoint a subgraph's checkpoint was written in the step of (LangGraph's `metadata.parents`). */
function parentIdOf(row: LgCheckpointRow, up: string): string | undefined {
  const id = parentsOf(row)?.[up];
  return typeof id === "string" ? id : undefined;
}

/** Where a `checkpointer: true` subgraph's memory stands on its parent's lineage: the checkpoint served (none: anew). */
export interface MemoryPlace {
  row: LgCheckpointRow | undefined;
  /** What is left out of its pending writes (its continuation when the subgraph went on past it). */
  undone: Undone | null;
}

/** What a parent's current lineage keeps, to weigh the subgraph's checkpoints by. */
interface ParentLineage {
  points: LgPointRow[];
  /** The parent's LangGraph checkpoints on its current lineage, at or before its position, by id. */
  on: Map<string, LgPointRow>;
  segments: LineageSegment[];
  windows: Map<string, WaitWindow[]>;
  /**
   * The parent is itself a memory subgraph: no move forks its session, only its own put (a run served off its head),
   * which lands after the subgraph's checkpoints of that step; where each was put tells the runs apart (`putOffLineage`).
   */
  ownForks: boolean;
}

/**
 * The checkpoint of a `checkpointer: true` subgraph's namespace `ns` its parent's current lineage keeps last, when the
 * namespace's own head (`own`) is not one it keeps: the parent's session was rolled back, switched or edited past the
 * steps that wrote it. A subgraph's checkpoint belongs to the parent's step it was written in (LangGraph's
 * `metadata.parents`; else, as under durability "exit", the parent's checkpoint written next after it), and is kept
 * when that checkpoint is on the lineage at or before the parent's position and it was written within what the
 * lineage keeps of that step (`waitWindows`: not after a rollback back to it). Undefined: the own head is kept (or
 * nothing tells). A place with no row: the lineage keeps none of them, the subgraph runs anew. With `rootAt`, the
 * root's lineage is taken as it stands at that checkpoint of its (`RootAt`).
 */
export function* memoryOnParentLineage(
  tx: Tx,
  userId: string,
  threadId: string,
  ns: string,
  sessionId: string,
  own: LgCheckpointRow,
  rootAt?: LgPointRow,
): Step<MemoryPlace | undefined> {
  return (yield* memoryServed(tx, userId, threadId, ns, sessionId, own, rootAt))?.place;
}

/**
 * `memoryOnParentLineage`, with the windows of the root's step its served checkpoint was written in: the subgraphs
 * it runs by task (a plain subgraph inside it) are weighed by them (`throughParent`).
 */
export function* memoryServed(
  tx: Tx,
  userId: string,
  threadId: string,
  ns: string,
  sessionId: string,
  own: LgCheckpointRow,
  rootAt?: LgPointRow,
): Step<{ place: MemoryPlace; windows: readonly WaitWindow[] } | undefined> {
  const view = yield* memoryView(tx, userId, threadId, ns, sessionId, own, rootAt);
  if (!view) return undefined;
  const windows = (view.place.row && view.windows.get(view.place.row.checkpointId)) ?? WHOLE_STEP;
  return { place: yield* resumedAtMemoryPlace(tx, view.parent, sessionId, view.place), windows };
}

/** A memory namespace's place off its own head, with what it keeps: its own memory subgraphs are weighed by it. */
interface MemoryView {
  place: MemoryPlace;
  /** For each checkpoint the place keeps (and the one it serves), the windows of the root's step it was written in. */
  windows: Map<string, readonly WaitWindow[]>;
  /** The thread of the graph whose lineage the memory follows (`memoryLineageNs`). */
  parent: LgThreadRow;
}

/** `memoryOnParentLineage`, with what the place keeps (`MemoryView`). */
function* memoryView(
  tx: Tx,
  userId: string,
  threadId: string,
  ns: string,
  sessionId: string,
  own: LgCheckpointRow,
  rootAt?: LgPointRow,
): Step<MemoryView | undefined> {
  const up = memoryLineageNs(ns, own);
  if (up === undefined) return undefined;
  const parent = yield* tx.langgraph.getThread(userId, threadId, up);
  if (!parent) return undefined;
  const { branch, head } = yield* ownedCurrent(tx, parent.sessionId, parent.userId);
  const points = yield* tx.langgraph.pointsOf(parent.sessionId);
  // At the root's checkpoint a run travelled from: the root's lineage up to it (its step is the run's next).
  const travelled = up === "" ? rootAt : undefined;
  const segments = travelled ? yield* tx.lineage(travelled.branchId, travelled.position) : yield* tx.lineage(branch.id, head.position);
  // The parent's head, where a move took it (a stored checkpoint the graph went on from): its step runs again.
  const at = travelled ? undefined : yield* checkpointAt(tx, parent.sessionId, branch, head.position, "head", points);
  // A parent that is itself a memory subgraph is served off its own head when a move of the root took it back (its own
  // session is never moved): the subgraph is weighed by where that serves the parent, in the root's step's windows.
  const above =
    memoryParentNs(up) !== undefined && at?.kind === "stored" && at.moved !== true
      ? yield* memoryView(tx, userId, threadId, up, parent.sessionId, at.row, rootAt)
      : undefined;
  const onAt = travelled
    ? (yield* onLineageAt(tx, points, segments, travelled.position)).filter((p) => p.seq <= travelled.seq)
    : yield* onLineageAt(tx, points, segments, head.position);
  const on = new Map(onAt.map((p) => [p.checkpointId, p]));
  // A checkpoint is marked with the root's branch it was put on (`put-on.ts`): weighed by the root's lineage, not the
  // parent's, when the parent is itself a memory subgraph (a move forks only the root's session).
  const rootSegments =
    up === ""
      ? segments
      : rootAt
        ? yield* tx.lineage(rootAt.branchId, rootAt.position)
        : ((yield* rootLineage(tx, userId, threadId)) ?? segments);
  const lineage: ParentLineage = { points, on, segments, windows: new Map(), ownForks: up !== "" };
  const subPoints = new Map((yield* tx.langgraph.pointsOf(sessionId)).map((p) => [p.checkpointId, p]));
  // Weighed against the parent's points and forks in the root's order (`rootOrder`); among themselves, by their own.
  const order = yield* rootOrder(tx, sessionId);
  const rootPoints = order ? new Map([...subPoints].map(([id, p]) => [id, { ...p, seq: order(p.seq) }])) : subPoints;
  const ownPoint = rootPoints.get(own.checkpointId);
  const ownKept = (yield* keptHere(tx, lineage, above, anchorOf(lineage, own, ownPoint, up), ownPoint)) !== false;
  if (ownKept && !(yield* putOffLineage(tx, sessionId, own.checkpointId, rootSegments))) return undefined;
  // The parent's checkpoint whose step runs again: its head a move took it to, or where a move above it serves it.
  const moved = above
    ? above.place.undone === null
      ? undefined
      : above.place.row?.checkpointId
    : at?.kind === "stored" && at.moved === true
      ? at.row.checkpointId
      : undefined;
  const windows = new Map<string, readonly WaitWindow[]>();
  let chosen: { row: LgCheckpointRow; seq: number } | undefined;
  let first: { row: LgCheckpointRow; seq: number } | undefined;
  let stepKept = false;
  for (const row of yield* tx.langgraph.checkpointsOf(sessionId)) {
    const p = subPoints.get(row.checkpointId);
    if (!p) continue;
    const inRoot = rootPoints.get(row.checkpointId);
    const anchor = anchorOf(lineage, row, inRoot, up);
    // Put while the root's session was on a branch its lineage does not hold: that branch's run (`put-on.ts`).
    const keeps =
      (yield* keptHere(tx, lineage, above, anchor, inRoot)) !== false &&
      !(yield* putOffLineage(tx, sessionId, row.checkpointId, rootSegments));
    if (keeps) windows.set(row.checkpointId, (yield* windowsAt(tx, lineage, above, anchor)) ?? WHOLE_STEP);
    if (anchor !== undefined && anchor.checkpointId === moved) {
      if (!first || p.seq < first.seq) first = { row, seq: p.seq };
      stepKept ||= keeps;
    }
    if (keeps && (!chosen || p.seq > chosen.seq)) chosen = { row, seq: p.seq };
  }
  // Back at the parent's checkpoint itself, past everything the subgraph wrote in its step: where it first waited in
  // the step (asking its first question again), else where the step began.
  if (first && !stepKept) {
    const waited = (yield* waitsOf(tx, sessionId)).filter((w) => {
      const anchor = anchorOf(lineage, w.row, rootPoints.get(w.row.checkpointId), up);
      return anchor !== undefined && anchor.checkpointId === moved;
    });
    const firstWait = waited.reduce<NamespaceWait | undefined>((a, w) => (!a || w.seq < a.seq ? w : a), undefined);
    const served = firstWait?.row ?? first.row;
    const movedAt = points.find((x) => x.checkpointId === moved);
    windows.set(served.checkpointId, (yield* windowsAt(tx, lineage, above, movedAt)) ?? WHOLE_STEP);
    return { place: firstWait ? { row: firstWait.row, undone: "continuation" } : { row: first.row, undone: null }, windows, parent };
  }
  if (!chosen) return { place: { row: undefined, undone: "continuation" }, windows, parent };
  const newest = (yield* tx.langgraph.getCheckpoint(sessionId))?.checkpointId;
  return { place: { row: chosen.row, undone: chosen.row.checkpointId === newest ? null : "continuation" }, windows, parent };
}

/** The windows of the root's step a checkpoint of the parent's belongs to (undefined: the lineage does not keep it). */
function* windowsAt(
  tx: Tx,
  lineage: ParentLineage,
  above: MemoryView | undefined,
  anchor: LgPointRow | undefined,
): Step<readonly WaitWindow[] | undefined> {
  if (!anchor) return undefined;
  if (above) return above.windows.get(anchor.checkpointId);
  return lineage.on.has(anchor.checkpointId) ? yield* stepWindows(tx, lineage, anchor) : undefined;
}

/** Whether the parent's lineage keeps `p` (anchored at `anchor`): by the windows a memory parent above is served in. */
function* keptHere(
  tx: Tx,
  lineage: ParentLineage,
  above: MemoryView | undefined,
  anchor: LgPointRow | undefined,
  p: LgPointRow | undefined,
): Step<boolean | undefined> {
  if (!above) return yield* kept(tx, lineage, anchor, p);
  if (!anchor || !p) return undefined;
  return yield* within(tx, (yield* windowsAt(tx, lineage, above, anchor)) ?? [], p);
}

/** The current lineage of the thread's root graph's session (undefined: the thread has no root graph's yet). */
function* rootLineage(tx: Tx, userId: string, threadId: string): Step<LineageSegment[] | undefined> {
  const root = yield* tx.langgraph.getThread(userId, threadId, "");
  if (!root) return undefined;
  const { branch, head } = yield* ownedCurrent(tx, root.sessionId, root.userId);
  return yield* tx.lineage(branch.id, head.position);
}

/**
 * The parent's checkpoint a subgraph's checkpoint belongs to: the one its `metadata.parents` names, else the parent's
 * checkpoint written next after it (undefined: none yet).
 */
function anchorOf(lineage: ParentLineage, row: LgCheckpointRow, p: LgPointRow | undefined, up: string): LgPointRow | undefined {
  return memoryAnchor(lineage.points, row, p, up);
}

/** `anchorOf` among the parent's LangGraph checkpoints' points (`points`): `prune` keeps a step's memory with it. */
export function memoryAnchor(
  points: readonly LgPointRow[],
  row: LgCheckpointRow,
  p: LgPointRow | undefined,
  up: string,
): LgPointRow | undefined {
  if (!p) return undefined;
  const named = parentIdOf(row, up);
  return (
    (named === undefined ? undefined : points.find((x) => x.checkpointId === named)) ??
    points.filter((x) => x.seq > p.seq).reduce<LgPointRow | undefined>((a, x) => (!a || x.seq < a.seq ? x : a), undefined)
  );
}

/** Whether the parent's lineage keeps a subgraph's checkpoint (undefined: nothing tells, as a step still running). */
function* kept(tx: Tx, lineage: ParentLineage, anchor: LgPointRow | undefined, p: LgPointRow | undefined): Step<boolean | undefined> {
  if (!anchor || !p) return undefined;
  if (!lineage.on.has(anchor.checkpointId)) return false;
  return yield* within(tx, yield* stepWindows(tx, lineage, anchor), p);
}

/** What the parent's lineage keeps of the step of its checkpoint `anchor` (`waitWindows`), read once per lineage. */
function* stepWindows(tx: Tx, lineage: ParentLineage, anchor: LgPointRow): Step<WaitWindow[]> {
  let windows = lineage.windows.get(anchor.checkpointId);
  if (!windows) {
    windows = lineage.ownForks ? [...WHOLE_STEP] : yield* waitWindows(tx, anchor, lineage.segments);
    lineage.windows.set(anchor.checkpointId, windows);
  }
  return windows;
}

/** Whether a subgraph's checkpoint (its point, in the root's order) was written within one of `windows`. */
function* within(tx: Tx, windows: readonly WaitWindow[], p: LgPointRow): Step<boolean> {
  const at = (yield* tx.getCheckpoint(p.fpCheckpointId))?.createdAt ?? -Infinity;
  return windows.some((w) => p.seq <= w.upTo && at >= w.after);
}
