// What `prune(threadIds, { strategy: "keep_latest" })` keeps of one namespace of a thread, and the deletion of the rest.
// It keeps the LangGraph checkpoints something still reads: the newest (LangGraph's latest); what each branch's head
// is (the stored checkpoint there, or the base a head synthesized at a point is built on), so that the thread and
// every branch a user may switch back to go on as before; what each forkpoint checkpoint of the session that is not
// LangGraph's own (a user's, a policy's) resumes from; the checkpoints stored in a forkpoint checkpoint a branch forks
// from; in a subgraph's namespace, the checkpoints where it waited (an interrupt or an error) that the heads and points
// its parent's namespace keeps for those reasons land at, when they wait on its task there (a head moved back to one
// serves the subgraph where it waited as it stood: `namespace-head.ts`); in a `checkpointer: true` subgraph's
// namespace, all it wrote in each step its parent's namespace keeps and in the step before each that last ran it (its
// memory there); and, for each one kept, its ancestors up to where every DeltaChannel it holds no value of has a
// stored value (LangGraph rebuilds such a channel from their writes). A kept checkpoint whose continuations all go
// keeps its pending writes, marked (`went-on.ts`). Everything else goes: the LangGraph rows with their pending writes,
// the forkpoint checkpoints that held them (those a branch forks from stay), channel values no kept checkpoint has.
// The session's log is never touched: its messages and tree stay as they were.
import type { BranchRow, LgCheckpointRow, LgPointRow, Step, Tx } from "../store/port/index.js";
import { headOf, type EngineContext } from "../sessions/langgraph-bridge.js";
import { openChannels, type RowVersions, type ValuesNode } from "./channel-values.js";
import type { SaverParts } from "./saver-parts.js";
import { WHOLE_STEP, chosenWait, isWaitWrite, parentNs, taskOfNs, waitWindows, waitsOf, type WaitWindow } from "./namespace-waits.js";
import { checkpointAt, resolveSynthesized, synthesizedPosition, type PointCheckpoint, type Synthesized } from "./thread-head.js";
import { wentOnMark } from "./went-on.js";
import { carriedForkMarks } from "./saver-fork.js";
import { memoryAnchor, memoryLineageNs, memoryParentNs } from "./subgraph-memory.js";

/** Each stored checkpoint's channel versions, by session and id: rows never change, so they are read once. */
export type KnownVersions = Map<string, RowVersions>;

export const versionsKey = (sessionId: string, checkpointId: string): string => `${sessionId}\0${checkpointId}`;

/**
 * The tasks that waited (an interrupt or an error written) at the checkpoints a namespace keeps as something a head may
 * stand at, by thread and namespace (`waitsKey`), each with what the heads and points standing there keep of its step
 * (`waitWindows`, one list each): filled as each namespace is planned, parents before their subgraphs.
 */
export type KeptWaits = Map<string, Map<string, (readonly WaitWindow[])[]>>;

/** The LangGraph checkpoints each namespace keeps, by thread and namespace (`waitsKey`): its memory subgraphs' steps. */
export type KeptRows = Map<string, ReadonlySet<string>>;

export const waitsKey = (threadId: string, ns: string): string => `${threadId}\0${ns}`;

/** What `keep_latest` deletes in one session, as planned in the unit that deletes it. */
export interface PrunePlan {
  sessionId: string;
  /** LangGraph checkpoints that go, with their pending writes. */
  drop: LgCheckpointRow[];
  /** Kept checkpoints whose every continuation goes: each gets a mark that the graph went on from it. */
  wentOn: string[];
  /** Ids of checkpoints synthesized at points nothing kept is built on: their pending writes go. */
  orphanWriteIds: string[];
  /** Channel values no kept checkpoint has. */
  blobs: { channel: string; version: string }[];
}

/**
 * The plan for one session, in the write unit that carries it out; the rows whose versions are not known yet instead
 * (written since they were read: the caller reads them and runs the unit again).
 */
export function* planKeepLatest(
  parts: SaverParts,
  ctx: EngineContext,
  tx: Tx,
  sessionId: string,
  known: KnownVersions,
  waits: KeptWaits,
  kept: KeptRows,
): Step<{ plan: PrunePlan } | { missing: LgCheckpointRow[] }> {
  const rows = yield* tx.langgraph.checkpointsOf(sessionId);
  const missing = rows.filter((r) => !known.has(versionsKey(sessionId, r.checkpointId)));
  if (missing.length > 0) return { missing };
  const byId = new Map(rows.map((r) => [r.checkpointId, r]));
  const versionsOf = (row: LgCheckpointRow) => known.get(versionsKey(sessionId, row.checkpointId))!;
  const blobKeys = yield* tx.langgraph.blobKeysOf(sessionId);
  const blobSet = new Set(blobKeys.map((b) => blobKey(b.channel, b.version)));
  const hasBlob = (channel: string, version: string) => blobSet.has(blobKey(channel, version));

  const keptRows = new Set<string>();
  const keptSynth = new Map<string, Synthesized>();
  const queue: ValuesNode[] = [];
  const keepRow = (row: LgCheckpointRow) => {
    if (keptRows.has(row.checkpointId)) return;
    keptRows.add(row.checkpointId);
    queue.push({ kind: "stored", id: row.checkpointId, row, versions: versionsOf(row) });
  };
  const keepSynth = (synth: Synthesized) => {
    if (keptSynth.has(synth.id)) return;
    keptSynth.set(synth.id, synth);
    // Its tuple is its base's, with the session's messages: the base is kept (and walked) as any checkpoint is.
    const base = synth.base && byId.get(synth.base.checkpointId);
    if (base) keepRow(base);
  };
  const keepAt = (at: PointCheckpoint | undefined) => {
    const row = at?.kind === "stored" ? byId.get(at.row.checkpointId) : undefined;
    if (row) keepRow(row);
    else if (at?.kind === "synthesized") keepSynth(at.synth);
  };
  // By kept checkpoint: what the heads and points standing there keep of its step, for its subgraphs' waits.
  const landings = new Map<string, Map<string, readonly WaitWindow[]>>();
  const land = (id: string, windows: readonly WaitWindow[]) => {
    const known = landings.get(id) ?? new Map<string, readonly WaitWindow[]>();
    known.set(JSON.stringify(windows), windows);
    landings.set(id, known);
  };

  // LangGraph's latest: the newest id (uuid6 ids are time-ordered).
  let newest: LgCheckpointRow | undefined;
  for (const row of rows) if (!newest || row.checkpointId > newest.checkpointId) newest = row;
  if (newest) {
    keepRow(newest);
    land(newest.checkpointId, WHOLE_STEP);
  }
  // Each branch's head, as the thread reads it there (the current branch's is the thread's head).
  const branches = yield* tx.listBranches(sessionId);
  const branchById = new Map<string, BranchRow>(branches.map((b) => [b.id, b]));
  const points = yield* tx.langgraph.pointsOf(sessionId);
  const pointById = new Map(points.map((p) => [p.checkpointId, p]));
  const writeKeys = yield* tx.langgraph.writeKeysOf(sessionId);
  // Where a task waited: what a head standing there keeps of its step matters to its subgraphs (`waitWindows`).
  const waitedAt = new Set(writeKeys.filter((w) => isWaitWrite(w.channel)).map((w) => w.checkpointId));
  const waitedPoint = (at: PointCheckpoint | undefined) =>
    at?.kind === "stored" && waitedAt.has(at.row.checkpointId) ? pointById.get(at.row.checkpointId) : undefined;
  for (const branch of branches) {
    const position = (yield* headOf(tx, branch)).position;
    const at = yield* checkpointAt(tx, sessionId, branch, position, "head", points);
    keepAt(at);
    const p = waitedPoint(at);
    if (p) land(p.checkpointId, yield* waitWindows(tx, p, yield* tx.lineage(branch.id, position)));
  }
  // Each forkpoint checkpoint that is not LangGraph's own (nor the thread's empty start): what a rollback to it resumes.
  const thread = yield* tx.langgraph.threadOfSession(sessionId);
  const lgHeld = new Set(rows.map((r) => r.fpCheckpointId));
  const session = yield* tx.getSession(sessionId);
  const now = ctx.now();
  for (const cp of session ? yield* tx.sessionCheckpoints(session.userId, sessionId) : []) {
    if (cp.id === thread?.startCheckpointId || lgHeld.has(cp.id) || (cp.expiresAt !== null && cp.expiresAt <= now)) continue;
    const branch = branchById.get(cp.branchId);
    if (!branch) continue;
    const at = yield* checkpointAt(tx, sessionId, branch, cp.position, "point", points, cp.seq);
    keepAt(at);
    const p = waitedPoint(at);
    if (p) land(p.checkpointId, yield* waitWindows(tx, p, yield* tx.lineage(branch.id, cp.position), cp.seq));
  }
  // What a branch forks from keeps its LangGraph checkpoint: a rollback to it resumes exactly there.
  const forkPoints = new Set(branches.map((b) => b.forkCheckpointId).filter((id) => id !== null));
  for (const row of rows) {
    if (!forkPoints.has(row.fpCheckpointId)) continue;
    keepRow(row);
    const p = pointById.get(row.checkpointId);
    if (p) land(row.checkpointId, [{ after: -Infinity, upTo: p.seq }]);
  }
  // A subgraph whose task waited at a checkpoint its parent's namespace keeps: where it waited, which a head moved back
  // to that checkpoint serves (the wait each head or point standing there keeps last: `chosenWait`).
  const up = thread && parentNs(thread.checkpointNs);
  const asked = thread && up !== undefined ? waits.get(waitsKey(thread.threadId, up))?.get(taskOfNs(thread.checkpointNs)!) : undefined;
  if (asked) {
    const ownWaits = yield* waitsOf(tx, sessionId);
    for (const windows of asked) {
      const row = byId.get(chosenWait(ownWaits, windows)?.row.checkpointId ?? "");
      if (!row) continue;
      keepRow(row);
      land(row.checkpointId, windows);
    }
  }
  // A `checkpointer: true` subgraph's memory: all it wrote in each step its parent's namespace keeps, and in the step
  // before it that last ran the subgraph (what a head there, a rollback or a run from there is served: its memory).
  // A parent's head or point reads it through `memoryOnParentLineage`, which picks among a step's checkpoints by the
  // lineage it stands on (where the subgraph waited, went on, or began the step), so none of them can go.
  // Each checkpoint by the graph whose lineage it follows (`memoryLineageNs`): its parent's, or under a plain subgraph
  // (a namespace per task) the nearest graph above with a history of its own.
  const byUp = new Map<string, LgCheckpointRow[]>();
  for (const row of thread && memoryParentNs(thread.checkpointNs) !== undefined ? rows : []) {
    const up = memoryLineageNs(thread!.checkpointNs, row)!;
    byUp.set(up, [...(byUp.get(up) ?? []), row]);
  }
  for (const [up, upRows] of byUp) {
    const parentKept = kept.get(waitsKey(thread!.threadId, up));
    const parentThread = parentKept && (yield* tx.langgraph.getThread(thread!.userId, thread!.threadId, up));
    if (!parentKept || !parentThread) continue;
    const parentPoints = yield* tx.langgraph.pointsOf(parentThread.sessionId);
    const parentRows = yield* tx.langgraph.checkpointsOf(parentThread.sessionId);
    for (const id of yield* memoryStepsKept(tx, parentThread.sessionId, parentRows, parentKept, upRows, parentPoints, pointById, up)) {
      keepRow(byId.get(id)!);
    }
  }

  // The tasks that waited at what this namespace keeps so far (what a head may stand at): its subgraphs' waits to keep.
  if (thread) {
    const tasks = new Map<string, (readonly WaitWindow[])[]>();
    for (const w of writeKeys) {
      if (!isWaitWrite(w.channel) || !keptRows.has(w.checkpointId)) continue;
      const windows = [...(landings.get(w.checkpointId)?.values() ?? [WHOLE_STEP])];
      tasks.set(w.taskId, [...(tasks.get(w.taskId) ?? []), ...windows]);
    }
    waits.set(waitsKey(thread.threadId, thread.checkpointNs), tasks);
    // Filled on by the walk below: complete once this namespace is planned, before its subgraphs are.
    kept.set(waitsKey(thread.threadId, thread.checkpointNs), keptRows);
  }

  // Each kept checkpoint with a channel it holds no value of keeps its parent (which may keep its own, and so on), up
  // to the values those channels are rebuilt from; one of the format before 4 keeps its parent (its sends are there).
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i]!;
    if (node.kind !== "stored") continue;
    const parent = node.row.parentCheckpointId;
    if (parent === null || (node.versions.format >= 4 && openChannels(parts, node, hasBlob).length === 0)) continue;
    // The parent a stored checkpoint names: stored, or synthesized at a point; nothing when it is gone already.
    const row = byId.get(parent);
    if (row) keepRow(row);
    else keepAt(yield* resolvedAt(tx, sessionId, parent));
  }
  // A kept synthesized checkpoint's walk goes on from its base's parent: its base's walk covers it (it holds the
  // base's values, and no channel the base holds a value of is missing from it).

  const children = new Map<string, string[]>();
  for (const row of rows) {
    if (row.parentCheckpointId === null) continue;
    const list = children.get(row.parentCheckpointId);
    if (list) list.push(row.checkpointId);
    else children.set(row.parentCheckpointId, [row.checkpointId]);
  }
  // A kept checkpoint the graph went on from, all of whose continuations go: marked so (`went-on.ts`), its writes kept. A
  // head moved back to it hides what the continuation wrote there as before, and serves the answers and results stored
  // there since on other branches, which only their own marks tell from the continuation's.
  const wentOn = [...keptRows, ...keptSynth.keys()].filter((id) => {
    const next = children.get(id);
    return next !== undefined && next.every((c) => !keptRows.has(c));
  });
  const orphanWriteIds = [
    ...new Set(
      writeKeys.map((w) => w.checkpointId).filter((id) => !byId.has(id) && !keptSynth.has(id) && synthesizedPosition(id) !== undefined),
    ),
  ];
  const keptBlobs = new Set<string>();
  for (const id of keptRows) for (const [channel, version] of versionsOf(byId.get(id)!).versions) keptBlobs.add(blobKey(channel, version));
  return {
    plan: {
      sessionId,
      drop: rows.filter((r) => !keptRows.has(r.checkpointId)),
      wentOn,
      orphanWriteIds,
      blobs: blobKeys.filter((b) => !keptBlobs.has(blobKey(b.channel, b.version))),
    },
  };
}

/** Deletes what the plan drops, in the unit that planned it. Returns how many LangGraph checkpoints went. */
export function* carryOut(tx: Tx, plan: PrunePlan): Step<number> {
  const { sessionId, drop } = plan;
  // Read before the rows go: a saver's fork whose marked checkpoint goes stays told apart from a user's move.
  const forked = yield* carriedForkMarks(tx, sessionId, new Set(drop.map((r) => r.checkpointId)));
  yield* tx.langgraph.deleteCheckpointRows(
    sessionId,
    drop.map((r) => r.checkpointId),
  );
  yield* tx.langgraph.insertWrites(
    plan.wentOn.map((id) => wentOnMark(sessionId, id)),
    true,
  );
  yield* tx.langgraph.insertWrites(forked, true);
  yield* tx.langgraph.deleteWritesOf(sessionId, plan.orphanWriteIds);
  yield* tx.langgraph.deleteBlobs(sessionId, plan.blobs);
  // The forkpoint checkpoints that held them, unless a branch forks from one (the tree stays whole) or it holds another.
  for (const fpId of new Set(drop.map((r) => r.fpCheckpointId))) {
    if (!(yield* tx.checkpointInUse(sessionId, fpId))) yield* tx.deleteCheckpoint(fpId);
  }
  return drop.length;
}

/**
 * The checkpoints of a `checkpointer: true` subgraph's namespace (`rows`) that its parent's kept checkpoints (`parentKept`)
 * may be served from: all it wrote in the step of each (the step run from it), and in the nearest step before it on its
 * parent chain that wrote any (the memory a head there, a rollback to it or a run from it goes on with).
 */
function* memoryStepsKept(
  tx: Tx,
  parentSession: string,
  parentRows: readonly LgCheckpointRow[],
  parentKept: ReadonlySet<string>,
  rows: readonly LgCheckpointRow[],
  parentPoints: readonly LgPointRow[],
  pointById: ReadonlyMap<string, LgPointRow>,
  up: string,
): Step<Set<string>> {
  const byAnchor = new Map<string, string[]>();
  for (const row of rows) {
    const anchor = memoryAnchor(parentPoints, row, pointById.get(row.checkpointId), up);
    if (anchor) byAnchor.set(anchor.checkpointId, [...(byAnchor.get(anchor.checkpointId) ?? []), row.checkpointId]);
  }
  const parentOf = new Map(parentRows.map((r) => [r.checkpointId, r.parentCheckpointId]));
  const keep = new Set<string>();
  for (const id of parentKept) {
    for (const row of byAnchor.get(id) ?? []) keep.add(row);
    const seen = new Set([id]);
    let at = yield* storedParent(tx, parentSession, parentOf, id);
    while (at !== undefined && !seen.has(at)) {
      seen.add(at);
      const step = byAnchor.get(at);
      if (step) {
        for (const row of step) keep.add(row);
        break;
      }
      at = yield* storedParent(tx, parentSession, parentOf, at);
    }
  }
  return keep;
}

/** The stored checkpoint a parent's checkpoint goes on from: its parent, or the base of one synthesized at a point. */
function* storedParent(tx: Tx, sessionId: string, parentOf: ReadonlyMap<string, string | null>, id: string): Step<string | undefined> {
  const parent = parentOf.get(id);
  if (parent === null || parent === undefined) return undefined;
  if (parentOf.has(parent)) return parent;
  return (yield* resolveSynthesized(tx, sessionId, parent))?.base?.checkpointId;
}

function* resolvedAt(tx: Tx, sessionId: string, id: string): Step<PointCheckpoint | undefined> {
  const synth = yield* resolveSynthesized(tx, sessionId, id);
  return synth && { kind: "synthesized", synth };
}

const blobKey = (channel: string, version: string): string => JSON.stringify([channel, version]);
