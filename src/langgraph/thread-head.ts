// Where a LangGraph thread stands in its session's tree: its head, and the checkpoints synthesized at points of it.
// A thread's head is its session's current position: the LangGraph checkpoint sitting exactly there, or on the current
// branch the one only tool calls and state changes came after, or else a checkpoint ForkpointSaver synthesizes at that
// position (after a forkpoint rollback to a user's own checkpoint, an edit, a switch or an append).
//
// A synthesized checkpoint's id is a UUID (LangGraph derives task ids from checkpoint ids as UUID namespaces) of
// version 8 ("custom"): its first 12 bytes are SHA-256 of (session, the point's hash-chain value, the id of the
// LangGraph checkpoint it is based on), its last 4 the point's position. It never changes, and it names its point:
// the position narrows the search to one entry per branch, the hash picks the point and its base.
import type { BranchRow, LgCheckpointRow, LgPointRow, LineageSegment, Step, Tx } from "../store/port/index.js";
import { GENESIS_HASH, entryAt, sha256, type LineagePoint } from "../sessions/langgraph-bridge.js";

/** A checkpoint synthesized at a point: the LangGraph checkpoint it is based on, with the point's messages. */
export interface Synthesized {
  id: string;
  point: LineagePoint;
  /** The latest LangGraph checkpoint on the point's lineage at or before it (undefined: none, an empty start). */
  base: LgCheckpointRow | undefined;
  /** How many of the point's messages the session held at the base's point (the rest came after it). */
  baseCount: number;
  /** The messages channel's version (a number): the base's, or a new one when the messages differ from the base's. */
  messagesVersion: number | string | undefined;
  /** When the point's entry was written (ms; 0 at position 0): the checkpoint's `ts`. */
  at: number;
}

/** The checkpoint a thread has at a point: a stored LangGraph checkpoint, or a synthesized one. */
export type PointCheckpoint = ({ kind: "stored"; row: LgCheckpointRow } | { kind: "synthesized"; synth: Synthesized }) & {
  /** A head the session was moved to (not where the graph left it): what the graph did after it is undone there. */
  moved?: boolean;
};

const SYNTHESIZED_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The id of the checkpoint synthesized at `point` on top of `baseId` (null: no base). */
export function synthesizedId(sessionId: string, point: LineagePoint, baseId: string | null): string {
  const h = sha256(`forkpoint head\0${sessionId}\0${point.hash}\0${baseId ?? ""}`)
    .slice(0, 24)
    .split("");
  h[12] = "8"; // version 8
  h[16] = "89ab"[parseInt(h[16]!, 16) & 3]!; // the RFC 4122 variant
  const hex = h.join("") + point.position.toString(16).padStart(8, "0");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The position a synthesized id names, or undefined when the id is not one. */
export function synthesizedPosition(id: string): number | undefined {
  return SYNTHESIZED_ID.test(id) ? parseInt(id.slice(-8), 16) : undefined;
}

/** An input checkpoint holds an input the graph has not taken yet (LangGraph takes it in the step after it). */
const settled = (p: LgPointRow): boolean => p.source !== "input";

/** The newest of them (LangGraph's ids are time-ordered): what LangGraph itself reads as latest. */
function newest(points: LgPointRow[]): LgPointRow | undefined {
  return points.reduce<LgPointRow | undefined>((best, p) => (!best || p.checkpointId > best.checkpointId ? p : best), undefined);
}

/** Every LangGraph checkpoint on the lineage (`segments`) at or before `position`. */
function onLineage(points: LgPointRow[], segments: LineageSegment[], position: number, asOf: Map<string, number>): LgPointRow[] {
  const cut = new Map(segments.map((s) => [s.branchId, Math.min(s.upTo, position)]));
  return points.filter((p) => {
    const at = cut.get(p.branchId) ?? -1;
    return p.position < at || (p.position === at && p.seq <= (asOf.get(p.branchId) ?? Infinity));
  });
}

/**
 * For each segment of a lineage whose last point is a checkpoint the next segment's branch forks from (a rollback to
 * a user's checkpoint), that checkpoint's seq; for the last segment, `last` (a user's checkpoint there, read as a
 * point). A LangGraph checkpoint written at that position after it (a step resumed there that added no message, as a
 * thread answering an interrupt does) is not that point's: the lineage stands for the point as the checkpoint was.
 */
function* asOfCuts(tx: Tx, segments: LineageSegment[], points: LgPointRow[], last: number | undefined): Step<Map<string, number>> {
  const cuts = new Map<string, number>();
  for (let i = 0; i + 1 < segments.length; i++) {
    const { branchId, upTo } = segments[i]!;
    if (!points.some((p) => p.branchId === branchId && p.position === upTo)) continue;
    const seq = yield* forkSeq(tx, (yield* tx.getBranch(segments[i + 1]!.branchId))!);
    if (seq !== undefined) cuts.set(branchId, seq);
  }
  if (last !== undefined && segments.length > 0) cuts.set(segments.at(-1)!.branchId, last);
  return cuts;
}

/** Every LangGraph checkpoint on the lineage `segments` at or before `position`, as a head there holds them. */
export function* onLineageAt(tx: Tx, points: LgPointRow[], segments: LineageSegment[], position: number): Step<LgPointRow[]> {
  return onLineage(points, segments, position, yield* asOfCuts(tx, segments, points, undefined));
}

/** The lineage of `branch` up to `position`, with the seq each of its segments is cut at (`asOfCuts`). */
function* cutLineage(
  tx: Tx,
  branch: BranchRow,
  position: number,
  points: LgPointRow[],
  last: number | undefined,
): Step<{ segments: LineageSegment[]; cuts: Map<string, number> }> {
  const segments = yield* tx.lineage(branch.id, position);
  return { segments, cuts: yield* asOfCuts(tx, segments, points, last) };
}

/** The seq of the checkpoint a branch forks from (undefined: none, as an edit's fork). */
function* forkSeq(tx: Tx, branch: BranchRow): Step<number | undefined> {
  return branch.forkCheckpointId === null ? undefined : (yield* tx.getCheckpoint(branch.forkCheckpointId))?.seq;
}

/**
 * The base of a point, among the LangGraph checkpoints on its lineage at or before it: the latest (highest position,
 * then newest) that is not an input checkpoint, whose pending input came after the point or is among its messages
 * already (its other channels are its parent's). Never an input checkpoint: with nothing else on the lineage (an edit
 * of the thread's first message), its input is not the point's, and LangGraph would take it again.
 */
function baseAmong(on: LgPointRow[]): LgPointRow | undefined {
  const pool = on.filter(settled);
  const top = Math.max(-1, ...pool.map((p) => p.position));
  return newest(pool.filter((p) => p.position === top));
}

/** How many messages the session holds at a LangGraph checkpoint's point (-1: its branch is gone). */
function* msgCountAt(tx: Tx, p: LgPointRow): Step<number> {
  const branch = yield* tx.getBranch(p.branchId);
  return branch ? ((yield* entryAt(tx, branch, p.position))?.msgCount ?? 0) : -1;
}

/** The messages channel's version at a point: the base's when the point has the base's messages, else a new one. */
function* messagesVersionAt(
  tx: Tx,
  point: LineagePoint & { msgCount: number },
  base: LgCheckpointRow | undefined,
  basePoint: LgPointRow | undefined,
  baseCount: number,
): Step<number | string | undefined> {
  const baseVersion = base?.messagesVersion == null ? undefined : (JSON.parse(base.messagesVersion) as number | string);
  if (base && basePoint && base.messagesVersion !== null) {
    if (baseCount === point.msgCount) return baseVersion;
  } else if (!base && point.msgCount === 0) return undefined;
  // Above the base's (LangGraph sees the channel changed); the fraction, from the point, as `getNextVersion` has one.
  const n = typeof baseVersion === "number" && Number.isFinite(baseVersion) ? Math.floor(baseVersion) : 0;
  return n + 1 + (parseInt(point.hash.slice(0, 8), 16) / 2 ** 32) * 0.998 + 0.001;
}

function* synthesize(
  tx: Tx,
  sessionId: string,
  point: LineagePoint & { msgCount: number; at: number },
  basePoint: LgPointRow | undefined,
): Step<Synthesized> {
  const base = basePoint && (yield* tx.langgraph.getCheckpoint(sessionId, basePoint.checkpointId));
  const baseCount = basePoint ? yield* msgCountAt(tx, basePoint) : 0;
  return {
    id: synthesizedId(sessionId, point, basePoint?.checkpointId ?? null),
    point: { branchId: point.branchId, position: point.position, hash: point.hash },
    base,
    baseCount,
    messagesVersion: yield* messagesVersionAt(tx, point, base, basePoint, baseCount),
    at: point.at,
  };
}

/** What a point needs of its entry: the hash chain there, the messages so far, and when it was written. */
function* pointOf(tx: Tx, branch: BranchRow, position: number): Step<LineagePoint & { msgCount: number; at: number }> {
  const e = yield* entryAt(tx, branch, position);
  return { branchId: branch.id, position, hash: e?.hash ?? GENESIS_HASH, msgCount: e?.msgCount ?? 0, at: e?.createdAt ?? 0 };
}

/**
 * The checkpoint a thread has at `position` of `branch`. As its head (`head`: the session's current branch and
 * position): the newest LangGraph checkpoint written there on that branch, as LangGraph reads its latest; else, at a
 * branch's fork point, the LangGraph checkpoint it was forked from (a rollback to it); else one at the same point on
 * another branch (a rollback to a user's checkpoint there) that is not an input checkpoint (its pending input came
 * after that point), written before the lineage left that branch; else, on the session's current branch, the base a
 * synthesized one would have when only tool calls and state changes came after it (with its pending writes); else a
 * synthesized one. As a point (`configFor` a user's checkpoint): one at that point that is not an input checkpoint,
 * written before the lineage left its branch, else a synthesized one. Undefined for the thread's empty start (position
 * 0, nothing but an input checkpoint there). `known`: the session's points as read already in this unit (`prune` asks
 * for many). `asOf`: as a point, the seq of the user's checkpoint read there; at a user's checkpoint, LangGraph
 * checkpoints written after it are left out (`asOfCuts`).
 */
export function* checkpointAt(
  tx: Tx,
  sessionId: string,
  branch: BranchRow,
  position: number,
  as: "head" | "point" = "head",
  known?: LgPointRow[],
  asOf?: number,
): Step<PointCheckpoint | undefined> {
  const latest = as === "head" ? yield* tx.langgraph.latestPoint(sessionId) : undefined;
  // The usual case: the graph wrote last, and the session is where it left it.
  if (latest && latest.branchId === branch.id && latest.position === position) return yield* stored(tx, sessionId, latest, false);
  const point = yield* pointOf(tx, branch, position);
  const points = known ?? (yield* tx.langgraph.pointsOf(sessionId));
  const here = points.filter((p) => p.headHash === point.hash);
  const moved = as === "head";
  const own = as === "head" ? newest(here.filter((p) => p.branchId === branch.id && p.position === position)) : undefined;
  if (own) return yield* stored(tx, sessionId, own, moved);
  const forkedFrom =
    as === "head" && position === branch.forkPosition && branch.forkCheckpointId !== null
      ? here.find((p) => p.fpCheckpointId === branch.forkCheckpointId)
      : undefined;
  if (forkedFrom) return yield* stored(tx, sessionId, forkedFrom, moved);
  const last = as === "point" ? asOf : undefined;
  // At a user's checkpoint (the one a branch forks from, or `asOf`), not one LangGraph wrote there after it.
  const limit = as === "point" ? asOf : position === branch.forkPosition ? yield* forkSeq(tx, branch) : undefined;
  const candidates = here.filter((p) => settled(p) && p.seq <= (limit ?? Infinity));
  // On each branch the lineage leaves at a user's checkpoint, not one written there after that checkpoint either (a
  // branch rolled back from: its answer is not this lineage's); none on a branch it does not hold (one forked from
  // this point: the graph went on there, not here). The lineage is read only when that can matter.
  let cut = candidates.some((p) => p.branchId !== branch.id) ? yield* cutLineage(tx, branch, position, points, last) : undefined;
  const there = newest(cut ? onLineage(candidates, cut.segments, position, cut.cuts) : candidates);
  if (there) return yield* stored(tx, sessionId, there, moved);
  cut ??= yield* cutLineage(tx, branch, position, points, last);
  const base = baseAmong(onLineage(points, cut.segments, position, cut.cuts));
  // The thread's empty start: LangGraph starts the thread anew there.
  if (position === 0 && !base) return undefined;
  // Tool calls and state changes since the base, on the current branch: the graph goes on from the base itself, with
  // its pending writes (a finished task's results, an interrupt), as it would had nobody written to the session.
  if (as === "head" && base && (yield* onlyCallsSince(tx, sessionId, branch, base, point.msgCount)))
    return yield* stored(tx, sessionId, base, moved);
  return { kind: "synthesized", synth: yield* synthesize(tx, sessionId, point, base), moved };
}

/**
 * Whether `branch` is the session's current one and what came after `base` up to a point holding `msgCount` messages
 * is tool calls and state changes only (a put from the base lands after them: `continuesAtHead`). Another branch's
 * head keeps a synthesized checkpoint: a put from the base there would fork before those calls, not after them.
 */
function* onlyCallsSince(tx: Tx, sessionId: string, branch: BranchRow, base: LgPointRow, msgCount: number): Step<boolean> {
  if ((yield* tx.getSession(sessionId))?.currentBranchId !== branch.id) return false;
  return (yield* msgCountAt(tx, base)) === msgCount;
}

function* stored(tx: Tx, sessionId: string, p: LgPointRow, moved: boolean): Step<PointCheckpoint | undefined> {
  const row = yield* tx.langgraph.getCheckpoint(sessionId, p.checkpointId);
  return row && { kind: "stored", row, moved };
}

/**
 * The synthesized checkpoint `id` names in the session, or undefined. Tried first on `hint` (the session's current
 * branch: the usual case is a put going on from the head it read), then on every branch that reaches the position,
 * each with the base its point has now and, should LangGraph have written at or before the point since, every
 * earlier one.
 */
export function* resolveSynthesized(tx: Tx, sessionId: string, id: string, hint?: BranchRow): Step<Synthesized | undefined> {
  const position = synthesizedPosition(id);
  if (position === undefined) return undefined;
  const heads = yield* tx.branchHeads(sessionId);
  const branches = (yield* tx.listBranches(sessionId)).filter((b) => b.id !== hint?.id);
  const points = yield* tx.langgraph.pointsOf(sessionId);
  for (const branch of hint ? [hint, ...branches] : branches) {
    if (Math.max(heads.get(branch.id) ?? 0, branch.forkPosition) < position) continue;
    const point = yield* pointOf(tx, branch, position);
    const segments = yield* tx.lineage(branch.id, position);
    const on = onLineage(points, segments, position, yield* asOfCuts(tx, segments, points, undefined));
    const now = baseAmong(on);
    // Then no base, then any other on the lineage (an id read while another was the point's base).
    const tried = now ? [now, undefined, ...on.filter((p) => p !== now)] : [undefined, ...on];
    for (const base of tried) {
      if (synthesizedId(sessionId, point, base?.checkpointId ?? null) === id) return yield* synthesize(tx, sessionId, point, base);
    }
  }
  return undefined;
}
