// Where a run's function calls are stored: a resumed run must not run, nor answer, a call the session moved away from.
import { ConflictError } from "../models/errors.js";
import { fromJsonText } from "../models/json.js";
import type { LineageSegment, MessageRow, Step, Tx } from "../store/port/index.js";
import type { EngineContext, SessionRef } from "../sessions/core/context.js";
import { ownedSession } from "../sessions/core/owned.js";

/** The `callId` a stored item names when it is a `function_call` (the item's type is its message's role). */
function functionCallId(row: MessageRow): string | null {
  if (row.role !== "function_call") return null;
  const item = fromJsonText(row.content as string) as { callId?: unknown } | null;
  return typeof item === "object" && item !== null && typeof item.callId === "string" ? item.callId : null;
}

function* collect(tx: Tx, segment: LineageSegment, wanted: ReadonlySet<string>, found: Set<string>): Step<void> {
  const ids: (string | null)[] = [];
  yield* tx.segmentMessages(segment, functionCallId, ids);
  for (const id of ids) if (id !== null && wanted.has(id)) found.add(id);
}

/**
 * Of `callIds`, those whose `function_call` item the session stores but not on branch `branchId`'s lineage: a run
 * stopped for approval saved its calls, and another tab then edited, rolled back or switched away from them.
 */
function* callsOffLineage(tx: Tx, sessionId: string, branchId: string, callIds: readonly string[]): Step<string[]> {
  if (callIds.length === 0) return [];
  const wanted = new Set(callIds);
  const onLineage = new Set<string>();
  for (const segment of yield* tx.lineage(branchId)) yield* collect(tx, segment, wanted, onLineage);
  const rest = new Set(callIds.filter((id) => !onLineage.has(id)));
  if (rest.size === 0) return [];
  const elsewhere = new Set<string>();
  for (const b of yield* tx.listBranches(sessionId))
    yield* collect(tx, { branchId: b.id, after: b.forkPosition, upTo: Number.MAX_SAFE_INTEGER }, rest, elsewhere);
  return [...elsewhere];
}

/**
 * Throws `ConflictError` `SESSION_MOVED` when one of `callIds` is a function call the session holds only off branch
 * `branchId`'s lineage: what would run or be written there answers a call that conversation does not hold. A call
 * stored nowhere (a run's calls are saved once it is over) passes.
 */
export function* refuseCallsOffLineage(tx: Tx, sessionId: string, branchId: string, callIds: readonly string[], what: string): Step<void> {
  const off = yield* callsOffLineage(tx, sessionId, branchId, callIds);
  if (off.length === 0) return;
  throw new ConflictError(
    `function call ${JSON.stringify(off[0])} (${what}) is only on another branch of the session: it moved away from ` +
      "the run (an edit, rollback or switch made elsewhere); nothing was run or written",
    "SESSION_MOVED",
  );
}

/** `refuseCallsOffLineage` in a read of its own, for the session's branch `branchId`. */
export function checkCallsOnLineage(
  ctx: EngineContext,
  ref: SessionRef,
  branchId: string,
  callIds: readonly string[],
  what: string,
): Promise<void> {
  return ctx.store.read((tx) => checkUnit(tx, ref, branchId, callIds, what));
}

function* checkUnit(tx: Tx, ref: SessionRef, branchId: string, callIds: readonly string[], what: string): Step<void> {
  yield* ownedSession(tx, ref.id, ref.userId);
  yield* refuseCallsOffLineage(tx, ref.id, branchId, callIds, what);
}
