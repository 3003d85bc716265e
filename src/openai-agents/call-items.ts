// Where a run's function calls are stored: a resumed run must not run, nor answer, a call the session moved away from.
import { isDeepStrictEqual } from "node:util";
import { ConflictError } from "../models/errors.js";
import { fromJsonText } from "../models/json.js";
import type { LineageSegment, MessageRow, Step, Tx } from "../store/port/index.js";
import type { EngineContext, SessionRef } from "../sessions/core/context.js";
import { ownedSession } from "../sessions/core/owned.js";

/**
 * A function call a run names: its id, with its tool and arguments where the run gives them (an approved call's
 * `toolCall`; a result names its tool only). A model numbering its calls per response (`call_0`) reuses ids.
 */
export interface NamedCall {
  callId: string;
  name?: string;
  arguments?: string;
}

/** A stored `function_call` (its id, tool and arguments) or `function_call_result` (its call's id) item. */
type StoredCallItem = { result: false; call: NamedCall } | { result: true; callId: string };

/** What a stored item says of a function call (the item's type is its message's role); null: nothing. */
function storedCallItem(row: MessageRow): StoredCallItem | null {
  if (row.role !== "function_call" && row.role !== "function_call_result") return null;
  const item = fromJsonText(row.content as string) as { callId?: unknown; name?: unknown; arguments?: unknown } | null;
  if (typeof item !== "object" || item === null || typeof item.callId !== "string") return null;
  if (row.role === "function_call_result") return { result: true, callId: item.callId };
  const call: NamedCall = { callId: item.callId };
  if (typeof item.name === "string") call.name = item.name;
  if (typeof item.arguments === "string") call.arguments = item.arguments;
  return { result: false, call };
}

/** Arguments as JSON text, compared by value (key order aside) when both parse, else as text. */
function sameArguments(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return isDeepStrictEqual(JSON.parse(a), JSON.parse(b));
  } catch {
    return false;
  }
}

/** Whether stored call `stored` may be the call `wanted` names: the same id, tool and arguments wherever both give them. */
const sameCall = (stored: NamedCall, wanted: NamedCall): boolean =>
  stored.callId === wanted.callId &&
  (stored.name === undefined || wanted.name === undefined || stored.name === wanted.name) &&
  (stored.arguments === undefined || wanted.arguments === undefined || sameArguments(stored.arguments, wanted.arguments));

function* storedItems(tx: Tx, segment: LineageSegment, out: (StoredCallItem | null)[]): Step<void> {
  yield* tx.segmentMessages(segment, storedCallItem, out);
}

/**
 * Of `calls`, those whose `function_call` item the session stores but not on branch `branchId`'s lineage: a run
 * stopped for approval saved its calls, and another tab then edited, rolled back or switched away from them. On the
 * lineage means a call there with the same id, tool and arguments that no result there answers yet: an earlier
 * answered call reusing the id (`call_0` every response) is another call.
 */
function* callsOffLineage(tx: Tx, sessionId: string, branchId: string, calls: readonly NamedCall[]): Step<NamedCall[]> {
  if (calls.length === 0) return [];
  const lineage: (StoredCallItem | null)[] = [];
  for (const segment of yield* tx.lineage(branchId)) yield* storedItems(tx, segment, lineage);
  // The calls the lineage holds unanswered: a result answers the latest call before it with its id.
  const open: NamedCall[] = [];
  for (const item of lineage) {
    if (item === null) continue;
    if (!item.result) open.push(item.call);
    else {
      const answered = open.findLastIndex((c) => c.callId === item.callId);
      if (answered >= 0) open.splice(answered, 1);
    }
  }
  const rest = calls.filter((wanted) => !open.some((stored) => sameCall(stored, wanted)));
  if (rest.length === 0) return [];
  const elsewhere: (StoredCallItem | null)[] = [];
  for (const b of yield* tx.listBranches(sessionId))
    yield* storedItems(tx, { branchId: b.id, after: b.forkPosition, upTo: Number.MAX_SAFE_INTEGER }, elsewhere);
  const held = elsewhere.flatMap((item) => (item === null || item.result ? [] : [item.call]));
  return rest.filter((wanted) => held.some((stored) => sameCall(stored, wanted)));
}

/**
 * Throws `ConflictError` `SESSION_MOVED` when one of `calls` is a function call the session holds only off branch
 * `branchId`'s lineage: what would run or be written there answers a call that conversation does not hold. A call
 * stored nowhere (a run's calls are saved once it is over) passes.
 */
export function* refuseCallsOffLineage(tx: Tx, sessionId: string, branchId: string, calls: readonly NamedCall[], what: string): Step<void> {
  const off = yield* callsOffLineage(tx, sessionId, branchId, calls);
  if (off.length === 0) return;
  throw new ConflictError(
    `function call ${JSON.stringify(off[0]!.callId)} (${what}) is only on another branch of the session: it moved away from ` +
      "the run (an edit, rollback or switch made elsewhere); nothing was run or written",
    "SESSION_MOVED",
  );
}

/** `refuseCallsOffLineage` in a read of its own, for the session's branch `branchId`. */
export function checkCallsOnLineage(
  ctx: EngineContext,
  ref: SessionRef,
  branchId: string,
  calls: readonly NamedCall[],
  what: string,
): Promise<void> {
  return ctx.store.read((tx) => checkUnit(tx, ref, branchId, calls, what));
}

function* checkUnit(tx: Tx, ref: SessionRef, branchId: string, calls: readonly NamedCall[], what: string): Step<void> {
  yield* ownedSession(tx, ref.id, ref.userId);
  yield* refuseCallsOffLineage(tx, ref.id, branchId, calls, what);
}
