// Refuses a saved list copied from a conversation the session moved away from: a message or call only elsewhere.
import { isDeepStrictEqual } from "node:util";
import { ConflictError, ValidationError } from "../models/errors.js";
import type { JsonValue } from "../models/json.js";
import type { Message, MessageInput } from "../models/types.js";
import { messagesAfter } from "../sessions/writes/append-where.js";
import { sessionEngine, type SessionHandle } from "../sessions/session-handle.js";
import { keeps, type Comparing } from "./same-message.js";

export interface CallReading extends Comparing {
  /**
   * The ids of the tool calls a message names: the answer's own calls tell its branch where several end at `after`,
   * and a call only another branch holds tells a list copied from that branch (see `refuseOffLineage`).
   */
  callsOf?: (message: MessageInput) => string[];
  /**
   * What a message's parts tell of the calls they name beyond their ids (the tool and its input), by call id: a model
   * that numbers its calls per response (`call_0`) names another answer's calls with the same ids, and a list's call
   * whose input differs from the one another branch holds under its id is no copy of it (see `refuseOffLineage`).
   */
  callInputsOf?: (message: MessageInput) => [string, unknown][];
  /** A journaled call's tool and input in `callInputsOf`'s form: the track's calls are told apart as the messages' are. */
  trackInputOf?: (call: { tool: string; args: JsonValue }) => unknown;
}

/** One call a message names: its id, and its tool and input when the message gives them. */
interface NamedCall {
  id: string;
  input?: { value: unknown };
}

/** The calls a message names, one per input it gives a call (none: the id alone, as a tool result names its call). */
function namedCalls(m: { role: string; content: unknown }, options: CallReading): NamedCall[] {
  const input = { role: m.role, content: m.content } as MessageInput;
  const inputs = options.callInputsOf?.(input) ?? [];
  return [...new Set(options.callsOf?.(input) ?? [])].flatMap((id) => {
    const given = inputs.filter(([other]) => other === id);
    return given.length > 0 ? given.map(([, value]) => ({ id, input: { value } })) : [{ id }];
  });
}

/** Whether two named calls may be one call: the same id, and the same tool and input wherever both are given. */
const sameCall = (a: NamedCall, b: NamedCall): boolean =>
  a.id === b.id && (!a.input || !b.input || isDeepStrictEqual(a.input.value, b.input.value));

/**
 * Whether `calls` (a conversation's) hold `call`: one of them under its id, with its tool and input when both give
 * them. A conversation naming the id only without them (a tool result) holds every call under that id, as before
 * inputs were compared.
 */
function holds(calls: NamedCall[], call: NamedCall): boolean {
  const same = calls.filter((c) => c.id === call.id);
  if (same.length === 0) return false;
  const given = same.filter((c) => c.input);
  if (!call.input || given.length === 0) return true;
  return given.some((c) => sameCall(c, call));
}

/**
 * Refuses (`ConflictError` `SESSION_MOVED`, nothing written) a list whose messages from `kept` on name, by id or by
 * tool call, a message that only another branch holds: a list copied from a conversation the session moved away from
 * (another tab rolled back, edited or switched; the model rolled back through `aiCheckpointTools`). Saved, its copies
 * would show calls as done that the current branch does not hold. An id the current lineage holds too (an edited
 * message keeps its id) is no such copy; a call is told by its id and, where given, its tool and input: a model that
 * numbers its calls per response (`call_0`) names a call another branch holds with an id the current lineage holds
 * too. Looked for where the list leaves the current lineage: what follows its last kept message (`anchor`) on every
 * branch but the one read (`readOn`). False when the session left that branch since: read again.
 */
export async function refuseOffLineage(
  s: SessionHandle,
  readOn: string,
  history: Message[],
  anchor: string | null,
  kept: number,
  inputs: MessageInput[],
  options: CallReading,
): Promise<boolean> {
  const rest = inputs.slice(kept);
  const listed = rest.map((m) => namedCalls(m, options));
  if (!rest.some((m, i) => m.clientId != null || listed[i]!.length > 0)) return true;
  const tails = await sessionEngine(s).run((ctx, ref) => messagesAfter(ctx, ref, anchor));
  const onLineage = new Set(history.map((m) => m.id));
  const named = (m: Message) => [m.id, ...(m.clientId !== null ? [m.clientId] : [])];
  const ids = new Set(history.flatMap(named));
  const calls = history.flatMap((m) => namedCalls(m, options));
  // Read after the history: what was appended to the branch read since (another server saving the same list) is no copy.
  const off = tails.flat().filter((m) => m.branchId !== readOn && !onLineage.has(m.id));
  const offIds = new Set(off.flatMap(named).filter((id) => !ids.has(id)));
  let offCalls = off.flatMap((m) => namedCalls(m, options)).filter((c) => !holds(calls, c));
  // A call the current lineage made is this conversation's, whatever else holds its id: a model that numbers its calls
  // per response (`call_0`) names a regenerated answer's calls as the old answer's.
  if (offCalls.length > 0) {
    const track = (await s.toolTrack()).flatMap((t): NamedCall[] => {
      if (t.callId === null) return [];
      const value = options.trackInputOf?.({ tool: t.tool, args: t.args });
      return [value === undefined ? { id: t.callId } : { id: t.callId, input: { value } }];
    });
    offCalls = offCalls.filter((c) => !holds(track, c));
  }
  if (offIds.size === 0 && offCalls.length === 0) return true;
  const copied = copiedCall(off, rest, new Set([...ids, ...off.flatMap(named)]), options);
  for (const [i, m] of rest.entries()) {
    const byId = m.clientId != null && offIds.has(m.clientId);
    const call = listed[i]!.find((c) => offCalls.some((o) => sameCall(o, c)) && copied(m, c))?.id;
    if (!byId && call === undefined) continue;
    // Moved since the read (another server's save of the same list may have forked): read again before judging.
    if ((await s.info()).currentBranchId !== readOn) return false;
    const what = byId ? `message ${JSON.stringify(m.clientId)}` : `tool call ${JSON.stringify(call)}`;
    throw new ConflictError(
      `messages[${kept + i}] (${what}) is not in the session's current conversation but on another branch: the session ` +
        "moved on from this list (a rollback, an edit or a branch switch made elsewhere, or a rollback the model made); " +
        "nothing was written: load the chat again (loadChat) and send from there",
      "SESSION_MOVED",
    );
  }
  return true;
}

/**
 * Refuses (`ValidationError`, nothing written) a list that changes message `kept` into, or goes on after it with, a
 * message the current branch holds after it, by id or by tool call (`changed`: the stored message `kept`'s forms;
 * `later`: those of the stored messages after it): a turn dropped from the middle of the chat, or a message put before
 * stored ones. The edit forks before the changed message, undoing the calls after it, so the copies would show those
 * calls as done where the new branch does not hold them.
 */
export function refuseLaterCopies(changed: Message[], later: Message[], kept: number, inputs: MessageInput[], options: CallReading): void {
  const named = (m: Message) => [m.id, ...(m.clientId !== null ? [m.clientId] : [])];
  const after = { ids: new Set(later.flatMap(named)), calls: later.flatMap((m) => namedCalls(m, options)) };
  const from = {
    ids: new Set([...after.ids, ...changed.flatMap(named)]),
    calls: [...after.calls, ...changed.flatMap((m) => namedCalls(m, options))],
  };
  for (let i = kept; i < inputs.length; i++) {
    // The changed message itself may keep its stored id and calls (an edit): only the messages after it may not.
    const { ids, calls } = i === kept ? after : from;
    const m = inputs[i]!;
    const byId = m.clientId != null && ids.has(m.clientId);
    const call = namedCalls(m, options).find((c) => holds(calls, c))?.id;
    if (!byId && call === undefined) continue;
    const what = byId ? `message ${JSON.stringify(m.clientId)}` : `tool call ${JSON.stringify(call)}`;
    throw new ValidationError(
      `messages[${i}]`,
      `(${what}) is stored after messages[${kept}], which the list changes: a list may change a message and go on with ` +
        "new ones, not drop or move the messages stored after it (their tool calls would be undone, shown as done); " +
        "nothing was written: load the chat again (loadChat) and send from there",
    );
  }
}

/**
 * Whether message `m` of the list, naming call `id` that a message off the current lineage (`off`) names too, is a copy
 * of that call rather than another call under the same id (a model numbering its calls per response, `call_0`, and a
 * tool not wrapped, so no track tells the calls apart). Another call: the list gives the call (the message naming it,
 * or another of the list's new messages, as a tool message follows its call) a tool or input no off-lineage message
 * gives it under that id; or, the same, the message is new (its id on no message read) and differs from every such
 * message (a regenerated answer making the same call). Nothing to compare (no input in the list, or no
 * `callInputsOf`): a copy, as before.
 */
function copiedCall(
  off: Message[],
  rest: MessageInput[],
  known: Set<string>,
  options: CallReading,
): (m: MessageInput, call: NamedCall) => boolean {
  const inputsOf = options.callInputsOf;
  if (!inputsOf) return () => true;
  const callsOf = options.callsOf ?? (() => []);
  const listed = new Map<string, unknown>();
  for (const m of rest) for (const [id, input] of inputsOf(m)) if (!listed.has(id)) listed.set(id, input);
  return (m, { id, input: own }) => {
    if (!own && !listed.has(id)) return true;
    // The message's own input for the call, else the one the list gives it first (a tool result's call).
    const input = own ? own.value : listed.get(id);
    const theirs = off.filter((o) => callsOf({ role: o.role, content: o.content }).includes(id));
    const given = theirs.flatMap((o) => inputsOf({ role: o.role, content: o.content }).filter(([other]) => other === id));
    if (given.length > 0 && !given.some(([, value]) => isDeepStrictEqual(value, input))) return false;
    if (m.clientId != null && !known.has(m.clientId) && !theirs.some((o) => keeps(o, m, options))) return false;
    return true;
  };
}
