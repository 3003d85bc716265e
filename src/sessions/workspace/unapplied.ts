// Which calls a snapshot's files hold: its lineage's they do not, others' they do; recorded with it, read by a move restoring it.
import type { LineageSegment, SessionRow, SetAsideCall, Step, Tx } from "../../store/port/index.js";

/** What a snapshot records of its lineage's calls (JSON arrays of entry ids; null: none). */
export interface SnapshotCalls {
  /**
   * Succeeded in this world and not applied when the files were read, or still running then (a checkpoint from a
   * handler, or from another handle while a call runs): the files do not hold their effects, or not all of them.
   * The array may end with `{ "held": [ids], "replays": { id: seq }, "aside": [ids] }` (each may be absent): calls off
   * the lineage applied when the files were read (a stopped move left them, or a failed undo), whose effects the files
   * hold (see `heldOff`), the applied calls whose application then was a replay, with its `applied_seq` (see
   * `replaysHeld`), and the listed calls a files-only restore took out of the world (see `setAsideIn`). Readers of ids
   * skip it.
   */
  unapplied: string | null;
  /** Their undo or replay interrupted by a crash (reported unknown): whether the files hold them is not known yet. */
  unknown: string | null;
}

const listed = (ids: readonly string[]) => (ids.length === 0 ? null : JSON.stringify(ids));

/**
 * What `unapplied` ends with: the calls off the lineage the files hold, the replays among the applied calls, and the
 * applied calls in the order they were applied when that is not the order they were made in (a replay reorders them).
 */
interface Trailer {
  held?: readonly string[];
  replays?: Readonly<Record<string, number>>;
  order?: readonly string[];
  aside?: readonly string[];
}

/** `unapplied` as stored: the lineage's calls the files do not hold, then the trailer (when it says anything). */
function withTrailer(unapplied: readonly string[], { held = [], replays = {}, order = [], aside = [] }: Trailer): string | null {
  const trailer: Trailer = {
    ...(held.length === 0 ? {} : { held: [...held] }),
    ...(Object.keys(replays).length === 0 ? {} : { replays: { ...replays } }),
    ...(order.length === 0 ? {} : { order: [...order] }),
    ...(aside.length === 0 ? {} : { aside: [...aside] }),
  };
  return Object.keys(trailer).length === 0 ? listed(unapplied) : JSON.stringify([...unapplied, trailer]);
}

/**
 * The calls of the lineage up to `position` on `branchId` whose effects the files read now do not hold, or may not: a
 * move stopped by a failing undo left them undone, a crash interrupted their undo or replay, or they are running.
 */
export function* snapshotCalls(
  tx: Tx,
  session: Pick<SessionRow, "id" | "hasTools">,
  branchId: string,
  position: number,
): Step<SnapshotCalls> {
  if (!session.hasTools) return { unapplied: null, unknown: null };
  const segments = yield* tx.lineage(branchId, position);
  // Few calls are ever of unknown outcome: each is looked up, and kept when it is on the lineage.
  const onLineage = (row: { branchId: string; position: number }) => onSegments(segments, row);
  const unknown: string[] = [];
  const uncertain = yield* tx.uncertainInvocations(session.id);
  for (const id of uncertain) {
    const row = yield* tx.getTool(id);
    if (row && onLineage(row)) unknown.push(id);
  }
  // A call still running has written some of its effect at most: a move restoring these files replays it if it succeeds.
  const running: { id: string; position: number; branchId: string }[] = [];
  for (const owner of yield* tx.callOwners(session.id)) {
    const row = yield* tx.getTool(owner.entryId);
    if (row && row.status === null && onLineage(row)) running.push(row);
  }
  // Ids only, read segment by segment (a session's calls can be many, their results large).
  const unapplied: string[] = [];
  for (const s of segments) {
    const ids = [...(yield* tx.unappliedTools(s)), ...running.filter((r) => r.branchId === s.branchId).map((r) => r.id)];
    for (const id of ids) if (!unknown.includes(id) && !unapplied.includes(id)) unapplied.push(id);
  }
  // The world holds calls of another lineage too (a move stopped midway, an undo that failed): the files hold them
  // (those of unknown outcome may not: no move touches them until they are resolved).
  const applied = (yield* tx.appliedCalls(session.id)).filter((c) => !uncertain.includes(c.id));
  const held = applied.filter((c) => !onLineage(c)).map((c) => c.id);
  // Few applications are replays (a call applied again by a move): the files hold their results' worlds, not the first runs'.
  const replays: Record<string, number> = {};
  for (const r of yield* tx.replayedApplications(session.id)) if (!uncertain.includes(r.entryId)) replays[r.entryId] = r.appliedSeq;
  // A files-only restore took some out on purpose: a move restoring these files leaves those out too.
  const asideRows = unapplied.length === 0 ? [] : (yield* tx.setAsideCalls(session.id)).filter((c) => unapplied.includes(c.id));
  const aside = yield* asideOnLineage(tx, asideRows, { segments });
  const order = reordered(applied.map((c) => c.id).reverse());
  return { unapplied: withTrailer(unapplied, { held, replays, order, aside }), unknown: listed(unknown) };
}

/**
 * A lineage a set-aside call may be out of: its segments, and the branch a move makes off its last one (`made`, forking
 * at a checkpoint or not), which is not stored yet.
 */
export interface AsideLineage {
  segments: readonly LineageSegment[];
  made?: { id: string; forkCheckpointId: string | null } | undefined;
}

/**
 * The ids among `rows` (a session's `setAsideCalls`, several per call set aside on several branches) that `lineage` has
 * set aside on any of them (see `asideOn`), each once.
 */
export function* asideOnLineage(tx: Tx, rows: readonly SetAsideCall[], lineage: AsideLineage): Step<string[]> {
  const out: string[] = [];
  for (const row of rows) if (!out.includes(row.id) && (yield* asideOn(tx, row, lineage))) out.push(row.id);
  return out;
}

/**
 * The branches whose set-aside of call `entryId` a marking applied on `lineage` clears (see `markApplied`): those of
 * its rows that keep it out of the lineage, none of those the lineage forks before (it stays out on that branch). The
 * lineage is read only for a call set aside.
 */
export function* asideCleared(
  tx: Tx,
  sessionId: string,
  entryId: string,
  lineage: AsideLineage | (() => Step<AsideLineage>),
): Step<string[]> {
  const rows = (yield* tx.setAsideCalls(sessionId)).filter((r) => r.id === entryId && r.branchId !== null);
  if (rows.length === 0) return [];
  const on = typeof lineage === "function" ? yield* lineage() : lineage;
  const out: string[] = [];
  for (const row of rows) if (yield* asideOn(tx, row, on)) out.push(row.branchId!);
  return out;
}

/**
 * Whether a call set aside on a branch is out of `lineage`: the lineage goes through that branch past the head it had
 * then, or forks at that very head from a checkpoint whose files do not hold the call (taken after it was set aside),
 * or from no checkpoint (an edit made since). A row written before its branch or position was kept counts on every
 * lineage, or on every one through its branch, as it did then.
 */
function* asideOn(tx: Tx, row: SetAsideCall, lineage: AsideLineage): Step<boolean> {
  if (row.branchId === null || lineage.made?.id === row.branchId) return true;
  const i = lineage.segments.findIndex((s) => s.branchId === row.branchId);
  if (i < 0) return false;
  const upTo = lineage.segments[i]!.upTo;
  if (row.position === null || upTo > row.position) return true;
  if (upTo < row.position) return false;
  const next = lineage.segments[i + 1];
  const fork = next ? ((yield* tx.getBranch(next.branchId))?.forkCheckpointId ?? null) : (lineage.made?.forkCheckpointId ?? null);
  return fork === null || !(yield* checkpointHolds(tx, fork, row.id));
}

/** Whether the files checkpoint `checkpointId` captured hold call `entryId` (false when it captured none). */
function* checkpointHolds(tx: Tx, checkpointId: string, entryId: string): Step<boolean> {
  const files = yield* tx.checkpointManifest(checkpointId);
  const checkpoint = files && (yield* tx.getCheckpoint(checkpointId));
  const call = checkpoint && (yield* tx.getTool(entryId));
  if (!files || !checkpoint || !call) return false;
  const segments = yield* tx.lineage(checkpoint.branchId, checkpoint.position);
  return snapshotHolds(segments, { unapplied: notHeld(files), held: heldOff(files) }, call);
}

/** The applied calls oldest application first, when that is not the order they were made in (ids sort by it); else none. */
function reordered(oldestFirst: readonly string[]): readonly string[] {
  return oldestFirst.every((id, i) => i === 0 || oldestFirst[i - 1]! < id) ? [] : oldestFirst;
}

/**
 * Sorts calls a snapshot's files hold as they were applied when it was taken (`appliedOrder`), else in the order they
 * were made: marked applied again in that order, a later undo takes them back last first.
 */
export function byApplication<T extends { id: string }>(calls: T[], order: readonly string[]): T[] {
  const rank = new Map(order.map((id, i) => [id, i]));
  const r = (id: string) => rank.get(id) ?? Number.MAX_SAFE_INTEGER;
  return calls.sort((a, b) => r(a.id) - r(b.id) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/**
 * What a restore marks applied, in order: the calls it marks (`marking`) and those it leaves applied (the rest of
 * `ids`), as the snapshot's world applied them, from the first it marks on: those applied after it there are marked
 * again after it, so a later undo takes them all back last first.
 */
export function markedInOrder(ids: readonly string[], marking: ReadonlySet<string>, order: readonly string[]): string[] {
  const all = byApplication(
    ids.map((id) => ({ id })),
    order,
  ).map((c) => c.id);
  const first = all.findIndex((id) => marking.has(id));
  return first < 0 ? [] : all.slice(first);
}

/** The applied calls of a snapshot in the order they were applied, when a replay made it differ from the order made. */
export function appliedOrder(files: { unapplied?: string | null } | undefined): string[] {
  const order: unknown = trailerOf(files?.unapplied).order;
  return Array.isArray(order) ? order.filter((id): id is string => typeof id === "string") : [];
}

/** Whether a call sits on the lineage these segments make up. */
export function onSegments(segments: readonly LineageSegment[], call: { branchId: string; position: number }): boolean {
  return segments.some((s) => s.branchId === call.branchId && call.position > s.after && call.position <= s.upTo);
}

/**
 * Whether a snapshot's files hold a call: one of its lineage (`segments`, up to the snapshot) it does not list as
 * unapplied, or one off it that it lists as held.
 */
export function snapshotHolds(
  segments: readonly LineageSegment[],
  at: { unapplied: ReadonlySet<string>; held: ReadonlySet<string> },
  call: { id: string; branchId: string; position: number },
): boolean {
  return (onSegments(segments, call) && !at.unapplied.has(call.id)) || at.held.has(call.id);
}

/** The ids a snapshot's record lists (none for null: snapshots stored before it was kept). */
export function idsOf(text: string | null | undefined): string[] {
  if (!text) return [];
  const ids = JSON.parse(text) as unknown;
  return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === "string") : [];
}

/** The calls a restored snapshot's files do not hold, or may not: a move restoring it does not mark them applied. */
export const notHeld = (files: { unapplied?: string | null; unknown?: string | null } | undefined): ReadonlySet<string> =>
  new Set([...idsOf(files?.unapplied), ...idsOf(files?.unknown)]);

/**
 * The calls off a snapshot's lineage that were applied when its files were read (see `SnapshotCalls`): the files hold
 * their effects, so a move restoring them leaves those calls applied (or marks them so again), never undone or run.
 */
export function heldOff(files: { unapplied?: string | null } | undefined): ReadonlySet<string> {
  return new Set(heldIn(files?.unapplied));
}

/**
 * The applications a snapshot's files hold that were replays (call id → its `applied_seq` then): a move restoring them
 * marks such a call applied again with that replay's result, and any other with its first run's (see `markHeld`).
 */
export function replaysHeld(files: { unapplied?: string | null } | undefined): Record<string, number> {
  return replaysIn(files?.unapplied);
}

/**
 * The calls a snapshot lists as not held because a files-only restore had taken them out of the world (see
 * `setAside`): a move restoring it leaves them unapplied, as the conversation left them when it was taken.
 */
export function setAsideIn(files: { unapplied?: string | null } | undefined): ReadonlySet<string> {
  const aside: unknown = trailerOf(files?.unapplied).aside;
  return new Set(Array.isArray(aside) ? aside.filter((id): id is string => typeof id === "string") : []);
}

function trailerOf(text: string | null | undefined): Trailer {
  if (!text) return {};
  const ids = JSON.parse(text) as unknown;
  const last: unknown = Array.isArray(ids) ? ids.at(-1) : undefined;
  return typeof last === "object" && last !== null ? (last as Trailer) : {};
}

function heldIn(text: string | null | undefined): string[] {
  const held: unknown = trailerOf(text).held;
  return Array.isArray(held) ? held.filter((id): id is string => typeof id === "string") : [];
}

function replaysIn(text: string | null | undefined): Record<string, number> {
  const replays: unknown = trailerOf(text).replays;
  if (typeof replays !== "object" || replays === null) return {};
  return Object.fromEntries(Object.entries(replays).filter((e): e is [string, number] => typeof e[1] === "number"));
}

/**
 * A call of unknown outcome resolved: each snapshot read while it was unknown now says whether its files hold it. They
 * hold what the crash left (`held`: an undo that changed nothing, a replay that finished), as nothing else moves that
 * call's effect until it is resolved. `application`: the replay that finished, as the call's application now (the
 * one those files hold).
 */
export function* settleSnapshots(tx: Tx, sessionId: string, entryId: string, held: boolean, application?: number): Step<void> {
  for (const row of yield* tx.checkpointsAwaiting(sessionId, entryId)) {
    const unknown = idsOf(row.unknown);
    if (!unknown.includes(entryId)) continue;
    const unapplied = idsOf(row.unapplied).filter((id) => id !== entryId);
    const replays = replaysIn(row.unapplied);
    if (held && application !== undefined) replays[entryId] = application;
    const trailer = { held: heldIn(row.unapplied), replays, order: appliedOrder(row), aside: [...setAsideIn(row)] };
    yield* tx.setCheckpointCalls({
      checkpointId: row.checkpointId,
      unapplied: withTrailer(held ? unapplied : [...unapplied, entryId], trailer),
      unknown: listed(unknown.filter((id) => id !== entryId)),
    });
  }
}
