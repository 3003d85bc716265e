// Where a run's function calls are stored: a resumed run must not run, nor answer, a call the session moved away from.
import { isDeepStrictEqual } from "node:util";
import { ConflictError } from "../models/errors.js";
import { fromJsonText } from "../models/json.js";
import type { LineageSegment, MessageRow, SessionRow, Step, Tx } from "../store/port/index.js";
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

/**
 * A stored `function_call` (its id, tool and arguments) or `function_call_result` (its call's id) item, with its
 * message's id and position.
 */
type StoredCallItem = { at: { id: string; position: number } } & ({ result: false; call: NamedCall } | { result: true; callId: string });

/** What a stored item says of a function call (the item's type is its message's role); null: nothing. */
function storedCallItem(row: MessageRow): StoredCallItem | null {
  if (row.role !== "function_call" && row.role !== "function_call_result") return null;
  const item = fromJsonText(row.content as string) as { callId?: unknown; name?: unknown; arguments?: unknown } | null;
  if (typeof item !== "object" || item === null || typeof item.callId !== "string") return null;
  const at = { id: row.id, position: row.position };
  if (row.role === "function_call_result") return { at, result: true, callId: item.callId };
  const call: NamedCall = { callId: item.callId };
  if (typeof item.name === "string") call.name = item.name;
  if (typeof item.arguments === "string") call.arguments = item.arguments;
  return { at, result: false, call };
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

type CallOnLineage = Extract<StoredCallItem, { result: false }>;

/**
 * Where each of `calls` stands from branch `branchId`: `open`, a `function_call` on its lineage with the same id, tool
 * and arguments that no result there answers yet (an earlier answered call reusing the id, `call_0` every response,
 * is another call); else `off`, one the session stores only off that lineage (a run stopped for approval saved its
 * calls, and another tab then edited, rolled back or switched away from them); else `answered`, one the lineage holds
 * answered already (the same approval resumed twice); else `nowhere` (a run's calls are saved once it is over).
 */
function* whereCalls(
  tx: Tx,
  sessionId: string,
  branchId: string,
  calls: readonly NamedCall[],
): Step<{ call: NamedCall; where: "open" | "off" | "answered" | "nowhere"; open?: CallOnLineage }[]> {
  if (calls.length === 0) return [];
  const lineage: (StoredCallItem | null)[] = [];
  for (const segment of yield* tx.lineage(branchId)) yield* storedItems(tx, segment, lineage);
  // The calls the lineage holds unanswered: a result answers the latest call before it with its id.
  const open: CallOnLineage[] = [];
  const held = new Set<string>();
  for (const item of lineage) {
    if (item === null) continue;
    held.add(item.at.id);
    if (!item.result) open.push(item);
    else {
      const answered = open.findLastIndex((c) => c.call.callId === item.callId);
      if (answered >= 0) open.splice(answered, 1);
    }
  }
  const placed = calls.map((call) => {
    const found = open.findLast((stored) => sameCall(stored.call, call));
    return found ? { call, where: "open" as const, open: found } : { call, where: "nowhere" as "off" | "answered" | "nowhere" };
  });
  if (placed.every((p) => p.where === "open")) return placed;
  const elsewhere: (StoredCallItem | null)[] = [];
  for (const b of yield* tx.listBranches(sessionId))
    yield* storedItems(tx, { branchId: b.id, after: b.forkPosition, upTo: Number.MAX_SAFE_INTEGER }, elsewhere);
  const stored = (item: StoredCallItem | null): item is CallOnLineage => item !== null && !item.result;
  const off = elsewhere.filter((item) => stored(item) && !held.has(item.at.id)) as CallOnLineage[];
  const onLineage = lineage.filter(stored);
  for (const p of placed) {
    if (p.where === "open") continue;
    if (off.some((item) => sameCall(item.call, p.call))) p.where = "off";
    else if (onLineage.some((item) => sameCall(item.call, p.call))) p.where = "answered";
  }
  return placed;
}

/**
 * Throws `ConflictError` `SESSION_MOVED` when one of `calls` is a function call the session holds only off branch
 * `branchId`'s lineage: what would run or be written there answers a call that conversation does not hold; and
 * `CALL_ANSWERED` when that lineage answered it already (a run resumed twice from one saved state: the result the
 * other resume wrote stands). A call stored nowhere passes. The open `function_call` of each call, else undefined.
 */
export function* refuseCallsOffLineage(
  tx: Tx,
  sessionId: string,
  branchId: string,
  calls: readonly NamedCall[],
  what: string,
  answeredOutcome: string,
): Step<(CallOnLineage | undefined)[]> {
  const placed = yield* whereCalls(tx, sessionId, branchId, calls);
  const off = placed.find((p) => p.where === "off");
  if (off)
    throw new ConflictError(
      `function call ${JSON.stringify(off.call.callId)} (${what}) is only on another branch of the session: it moved away ` +
        "from the run (an edit, rollback or switch made elsewhere); nothing was run or written",
      "SESSION_MOVED",
    );
  const answered = placed.find((p) => p.where === "answered");
  if (answered)
    throw new ConflictError(
      `function call ${JSON.stringify(answered.call.callId)} (${what}) is answered already in this conversation: its ` +
        `approval was resumed, or it was rejected, before (one saved run state resumed twice); ${answeredOutcome}`,
      "CALL_ANSWERED",
    );
  return placed.map((p) => p.open);
}

/**
 * Throws `ConflictError` `CALL_ANSWERED` when one of `answered` (results about to be written on branch `branchId`,
 * each with its open `function_call` there) answers a call whose tool was journaled on that lineage after its
 * `function_call` (running or ended) by another run than the writer's (`made`: the calls the writer's run made): an
 * approval resumed at once with a rejection of the same call, or after an approved resume ran it and died unsaved.
 * The call ran: a result saying it did not must not be written; the approved resume writes the call's own result.
 */
export function* refuseCallsRunElsewhere(
  tx: Tx,
  branchId: string,
  answered: readonly NamedCall[],
  opens: readonly (CallOnLineage | undefined)[],
  made: ReadonlySet<string>,
  outcome: string,
): Step<void> {
  for (const [i, call] of answered.entries()) {
    const open = opens[i];
    if (open === undefined || made.has(call.callId)) continue;
    const ran: NamedCall = { ...open.call, ...(call.name !== undefined ? { name: call.name } : {}) };
    if ((yield* journaledAfter(tx, branchId, open.at.position, ran)) === undefined) continue;
    throw new ConflictError(
      `function call ${JSON.stringify(call.callId)} (answered by the items written) was approved and run by another ` +
        `resume of its approval; ${outcome}`,
      "CALL_ANSWERED",
    );
  }
}

/**
 * The branch of the first tool call journaled on `branchId`'s lineage after `position` that may be `call` (its id, and
 * its tool and arguments where given); undefined: none.
 */
function* journaledAfter(tx: Tx, branchId: string, position: number, call: NamedCall): Step<string | undefined> {
  for (const segment of yield* tx.lineage(branchId)) {
    if (segment.upTo <= position) continue;
    for (const entry of yield* tx.segmentEntries({ ...segment, after: Math.max(segment.after, position) })) {
      if (entry.kind !== "tool" || entry.callId !== call.callId || (call.name !== undefined && entry.tool !== call.name)) continue;
      if (call.arguments !== undefined && entry.content !== null && !sameArguments(entry.content, call.arguments)) continue;
      return entry.branchId;
    }
  }
  return undefined;
}

/** Why an approved call whose conversation answered it already is refused. */
const NOT_RUN = "it is not run, nothing was written";

/**
 * `approvedCallRequest`'s refusals again, in the unit that journals the approved call (its `check`): a rejection of
 * the call (or another resume's result) saved since that read refuses it, `CALL_ANSWERED`, the tool not run, nothing
 * written; a rejection saved once the call is journaled is refused in its own unit (`refuseCallsRunElsewhere`).
 * Whichever lands second is refused: the conversation never says "not approved" of a call whose tool ran.
 */
export const approvedCallCheck = (call: NamedCall) => ({ unit: approvedCallUnit, context: call });

function* approvedCallUnit(tx: Tx, session: SessionRow, call: NamedCall): Step<void> {
  yield* refuseCallsOffLineage(tx, session.id, session.currentBranchId, [call], "approved, to run now", NOT_RUN);
}

/**
 * An approved call about to run in a resumed run, from branch `branchId`: refused as `refuseCallsOffLineage` has it;
 * else the request id it runs under (undefined: its `function_call` is stored nowhere), so that the same approval
 * resumed twice at once (a double-clicked "approve", two servers) or again after a crash runs the tool once and
 * gets its recorded result: its stored `function_call`, and the branch of the call journaled after it on the lineage
 * (else `branchId`: a rollback that undid that call leaves it off the lineage, and the call runs again).
 */
export function approvedCallRequest(ctx: EngineContext, ref: SessionRef, branchId: string, call: NamedCall): Promise<string | undefined> {
  return ctx.store.read((tx) => approvedUnit(tx, ref, branchId, call));
}

function* approvedUnit(tx: Tx, ref: SessionRef, branchId: string, call: NamedCall): Step<string | undefined> {
  yield* ownedSession(tx, ref.id, ref.userId);
  const [open] = yield* refuseCallsOffLineage(tx, ref.id, branchId, [call], "approved, to run now", NOT_RUN);
  if (!open) return undefined;
  const ranOn = (yield* journaledAfter(tx, branchId, open.at.position, call)) ?? branchId;
  return `forkpoint/openai-agents:approved:${open.at.id}:${ranOn}`;
}
