// saveChat / loadChat: the AI SDK's UIMessage[] (and ModelMessage[]) as a session's history, one message each.
import type { ModelMessage, UIMessage } from "ai";
import { isDeepStrictEqual } from "node:util";
import { ValidationError } from "../models/errors.js";
import { ifAt as ifAtSchema, parseInput, type IfAt } from "../models/inputs.js";
import type { JsonObject, JsonValue } from "../models/json.js";
import type { Message, MessageInput } from "../models/types.js";
import type { SessionHandle } from "../sessions/session-handle.js";
import { decodeValue, encodeValue } from "../adapters/json-codec.js";
import { storedMessages, syncHistory, type SaveResult, type StoredMessage } from "./sync-history.js";

/** The forkpoint metadata key that holds a UIMessage's own `metadata` (any JSON type). */
const UI_METADATA = "uiMetadata";
/** The forkpoint metadata key that holds a ModelMessage's `providerOptions`. */
const PROVIDER_OPTIONS = "providerOptions";

function record(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ValidationError(field, "must be a message object");
  return value as Record<string, unknown>;
}

function list(messages: unknown, where: string): unknown[] {
  if (!Array.isArray(messages)) throw new ValidationError(where, "must be an array of messages");
  return messages;
}

/** The roles a UIMessage has. */
const UI_ROLES = new Set(["system", "user", "assistant"]);

/**
 * The list's messages, each id once: a list naming one message twice is no chat a page shows (the second would be
 * stored as another message under the same id, and either could be read for it).
 */
function uiInputs(messages: unknown): MessageInput[] {
  const inputs = list(messages, "messages").map(uiInput);
  const seen = new Map<string, number>();
  inputs.forEach((m, i) => {
    if (m.clientId == null) return;
    const first = seen.get(m.clientId);
    if (first !== undefined)
      throw new ValidationError(`messages[${i}].id`, `repeats messages[${first}].id (${JSON.stringify(m.clientId)})`);
    seen.set(m.clientId, i);
  });
  return inputs;
}

function uiInput(value: unknown, i: number): MessageInput {
  const m = record(value, `messages[${i}]`);
  if (typeof m.id !== "string") throw new ValidationError(`messages[${i}].id`, "must be a string");
  if (typeof m.role !== "string" || !UI_ROLES.has(m.role))
    throw new ValidationError(`messages[${i}].role`, `must be "system", "user" or "assistant" (a UIMessage's role)`);
  if (!Array.isArray(m.parts)) throw new ValidationError(`messages[${i}].parts`, "must be an array of parts");
  return {
    role: m.role,
    content: encodeValue(m.parts, `messages[${i}].parts`),
    // An empty id (a message the client has not named yet) is stored without one; loadChat gives it forkpoint's.
    ...(m.id !== "" ? { clientId: m.id } : {}),
    ...(m.metadata !== undefined ? { metadata: { [UI_METADATA]: encodeValue(m.metadata, `messages[${i}].metadata`) } } : {}),
  };
}

/** A stored message's parts: its content when saved by saveChat; a plain-text message's text as one text part. */
function parts(content: JsonValue): unknown[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  const decoded: unknown = decodeValue(content);
  return Array.isArray(decoded) ? decoded : [{ type: "text", text: JSON.stringify(content) }];
}

function metadataOf(metadata: JsonObject | null, key: string): { found: boolean; value: unknown } {
  return metadata !== null && key in metadata ? { found: true, value: decodeValue(metadata[key]!) } : { found: false, value: undefined };
}

function toUiMessage({ first, latest }: StoredMessage): UIMessage {
  const meta = metadataOf(latest.metadata, UI_METADATA);
  return {
    // The id the app gave it, or (saved unnamed) the id of the entry it began as, which stays as it goes on.
    id: latest.clientId ?? first.clientId ?? first.id,
    role: latest.role as UIMessage["role"],
    ...(meta.found ? { metadata: meta.value } : {}),
    parts: parts(latest.content) as UIMessage["parts"],
  };
}

/**
 * A part in the form a message is compared in: ai@7's `validateUIMessages({ tools })` rewrites a finished call of a
 * tool the app no longer has from `tool-<name>` to `dynamic-tool` (`dynamic: false`, `toolName`), so a chat validated
 * before it is saved would otherwise look edited there, and the save would fork and undo every later tool call.
 */
function staticForm(part: unknown): unknown {
  if (typeof part !== "object" || part === null || Array.isArray(part)) return part;
  const { type, dynamic, toolName, ...rest } = part as Record<string, unknown>;
  if (type !== "dynamic-tool" || dynamic !== false || typeof toolName !== "string") return part;
  return { ...rest, type: `tool-${toolName}` };
}

/**
 * Text content as the one text part `loadChat` and `convertToModelMessages` give it: a message written with `s.append`
 * (a string) and read back as parts is the same message, not an edit that would fork and undo every later call.
 */
const asParts = (content: unknown): unknown => (typeof content === "string" ? [{ type: "text", text: content }] : content);

/** A message's content as compared: its parts in their static form. */
const sameAs = (content: unknown): unknown => {
  const parts = asParts(content);
  return Array.isArray(parts) ? parts.map(staticForm) : parts;
};

const isToolPart = (p: unknown): p is { type: string; toolCallId: string } =>
  typeof p === "object" &&
  p !== null &&
  !Array.isArray(p) &&
  typeof (p as { type?: unknown }).type === "string" &&
  ((p as { type: string }).type.startsWith("tool-") || (p as { type: string }).type === "dynamic-tool") &&
  typeof (p as { toolCallId?: unknown }).toolCallId === "string";

/** The ids of the tool calls a message's parts name (`undoableTools` records each call under its `toolCallId`). */
export const callsOf = (m: MessageInput): string[] =>
  Array.isArray(m.content) ? m.content.flatMap((p) => (isToolPart(p) ? [p.toolCallId] : [])) : [];

/**
 * A tool part's states that tell its call has not run: an approval still asked for, answered (an approved call runs
 * only once the list holding the answer is sent), or denied.
 */
const NOT_RUN = new Set(["approval-requested", "approval-responded", "output-denied"]);

/**
 * The ids of the tool calls a message's parts show run or running: a call whose approval it asks for or answers is
 * not (a stale tab's answer to an approval another request granted is an answer without that call, to run again).
 */
export const shownCallsOf = (m: MessageInput): string[] =>
  Array.isArray(m.content)
    ? m.content.flatMap((p) => (isToolPart(p) && !NOT_RUN.has(String((p as { state?: unknown }).state)) ? [p.toolCallId] : []))
    : [];

/**
 * The tool and input of each call a message's parts give one (a part still streaming its input, or only answering a
 * call, gives none): a model numbering its calls per response names a regenerated answer's calls as the old one's.
 */
export const callInputsOf = (m: MessageInput): [string, unknown][] =>
  Array.isArray(m.content)
    ? m.content.flatMap((p): [string, unknown][] => {
        if (!isToolPart(p)) return [];
        const part = staticForm(p) as { type: string; toolName?: unknown; state?: unknown; input?: unknown; rawInput?: unknown };
        if (part.state === "input-streaming") return [];
        const input = part.input !== undefined ? part.input : part.rawInput;
        // A dynamic tool's part names its tool apart: as `tool-<name>`, it compares with the track's calls.
        const tool = part.type === "dynamic-tool" && typeof part.toolName === "string" ? `tool-${part.toolName}` : part.type;
        return input === undefined ? [] : [[p.toolCallId, [tool, input]]];
      })
    : [];

/**
 * How far on a tool part's state is, in the order a call goes through them: a result (an output, an error, a deny) is
 * as far on as any other.
 */
const STATE_ORDER: Readonly<Record<string, number>> = {
  "input-streaming": 0,
  "input-available": 1,
  "approval-requested": 2,
  "approval-responded": 3,
  "output-available": 4,
  "output-error": 4,
  "output-denied": 4,
};

/** A tool part's state and approval answer, as `partGoesOn` compares them. */
interface PartProgress {
  state?: unknown;
  approval?: { approved?: unknown };
}

/**
 * Whether tool part `later` can be `part` gone on: its state not gone back, an approval answer it had kept. Either is
 * another tab's answer to the same call (a stale tab denying an approval another request granted), not this one.
 */
function partGoesOn(part: PartProgress, later: PartProgress): boolean {
  const [was, is] = [STATE_ORDER[String(part.state)], STATE_ORDER[String(later.state)]];
  if (was !== undefined && is !== undefined && is < was) return false;
  const [answered, answers] = [part.approval?.approved, later.approval?.approved];
  return answered === undefined || answers === undefined || answered === answers;
}

/** A journaled call as `callInputsOf` and `modelCallInputsOf` give one: a list's call is told from the track's by it. */
const trackInputOf = (t: { tool: string; args: JsonValue }): unknown => [`tool-${t.tool}`, t.args];

/**
 * Whether `next` is the stored answer gone on: both assistant messages, `next`'s parts begin with the stored ones,
 * where a tool part may have moved on to a later state (its output added by the client, an approval answered), its
 * input and its approval's answer the same.
 * The AI SDK continues the last assistant message this way (same message, more parts) after a client-side tool's
 * output or a tool approval; an edit or a regenerated answer differs in its parts instead.
 */
function continuesAnswer(stored: Message, next: MessageInput): boolean {
  if (stored.role !== "assistant" || next.role !== "assistant") return false;
  if (!Array.isArray(stored.content) || !Array.isArray(next.content) || next.content.length < stored.content.length) return false;
  return stored.content.every((storedPart, i) => {
    const part = staticForm(storedPart);
    const later = staticForm((next.content as JsonValue[])[i]);
    if (isDeepStrictEqual(part, later)) return true;
    if (!isToolPart(part) || !isToolPart(later) || part.type !== later.type || part.toolCallId !== later.toolCallId) return false;
    // A stale tab's answer to the same approval is a version of the answer, its call undone, not the answer gone on.
    if (!partGoesOn(part as PartProgress, later as PartProgress)) return false;
    // The same call gone on keeps its input: another input under the id is another request's call (a model numbering
    // its calls per response, answering the same question), and the stored form another request's answer.
    const [was, is] = [part, later].map((p) => callInputsOf({ role: "assistant", content: [p] })[0]?.[1]);
    return was === undefined || is === undefined || isDeepStrictEqual(was, is);
  });
}

/**
 * Stores the chat's whole `UIMessage[]` as the session's current history, as the AI SDK's persistence guide calls it
 * (after each response, `onEnd`, or each step, `onStepEnd`, with every message): one forkpoint message per UIMessage (its id as `clientId`, its parts as
 * content with binary data as base64, its `metadata` kept). Unchanged messages are not written again; new ones are
 * appended; a changed earlier message (a regenerated answer, an edited question) becomes a new version (`< 2/2 >`),
 * and a list that stops short of the history (a regenerate request) forks right after its last message, undoing tool
 * calls made after it: nothing is overwritten. An empty list is refused (`ValidationError`, nothing written) once the
 * chat holds a message: it is a lost list, not a chat; starting over is a new session (or a rollback).
 * Call it with the request's messages before the agent loop too, so a regenerate's or edit's tool calls land on the
 * new branch (saved only after, the fork would undo them). Then save the response with `{ after }`, the
 * `lastMessageId` that first save returned: the answer lands right after its question on the question's own lineage,
 * even when the session moved meanwhile (an edit or a rollback in another tab while the answer streamed); it becomes a
 * version of what follows the question there, and the session stays where the user put it. The same list saved again
 * is stored once; an answer equal to one stored on another branch (a regenerated answer in the same words) is another
 * answer unless its id or its tool calls tell otherwise.
 * An earlier message whose `metadata` only changed (a thumbs-up) is kept as stored: no fork, no call undone, the change
 * not stored; the last answer's new metadata (its usage, sent with its end) is stored as its later form. A list holding a message that, by its id or a tool call it names, is only on another branch (a stale tab
 * after a rollback, edit or switch elsewhere; a rollback the model made) is refused, `ConflictError` `SESSION_MOVED`,
 * nothing written: load the chat again. `{ ifAt }` refuses the save the same way once the session left that branch
 * (and, with `head`, once anything was added to it: a tab that missed another tab's turn).
 * @example const saved = await saveChat(s, messages); ...; await saveChat(s, [...messages, answer], { after: saved.lastMessageId })
 */
export async function saveChat<M extends UIMessage<any, any, any>>(
  s: SessionHandle,
  messages: readonly M[],
  options: SaveChatOptions = {},
): Promise<SaveResult> {
  return syncHistory(s, uiInputs(messages), {
    continues: continuesAnswer,
    sameAs,
    callsOf,
    shownCallsOf,
    callInputsOf,
    trackInputOf,
    ...optionsOf(options),
  });
}

/** `saveChat`'s options. */
export interface SaveChatOptions {
  /**
   * The stored message (a forkpoint message id, as `lastMessageId` of an earlier save returns it) that the list's new
   * messages follow; the list's messages up to it must be its lineage's. Null or absent: the list is the current history.
   */
  after?: string | null;
  /**
   * The session's current branch (and head position) as the client last saw it, as any write takes it: the save runs
   * only while the session is still there, else `ConflictError` `SESSION_MOVED` and nothing is written (a tab showing
   * a conversation another tab moved away from cannot write into the one it moved to). With `after`, checked once as
   * the save begins and again as it writes.
   */
  ifAt?: IfAt;
}

function optionsOf(options: SaveChatOptions): { after?: string; ifAt?: { branchId: string; head?: number | undefined } } {
  if (typeof options !== "object" || options === null) throw new ValidationError("options", "must be an object");
  const { after, ifAt, ...rest } = options;
  if (Object.keys(rest).length > 0) throw new ValidationError("options", `unknown option(s): ${Object.keys(rest).join(", ")}`);
  const at = ifAt === undefined ? {} : { ifAt: parseInput(ifAtSchema, ifAt, "ifAt") };
  if (after === undefined || after === null) return at;
  if (typeof after !== "string" || after === "") throw new ValidationError("after", "must be a message id");
  return { after, ...at };
}

/** The session's current history as `UIMessage[]`, exactly as saved (binary data back as the Uint8Array, Buffer or ArrayBuffer it was). */
export async function loadChat<M extends UIMessage<any, any, any> = UIMessage>(s: SessionHandle): Promise<M[]> {
  // An id the chat holds twice (given twice with `s.append`, or saved before saveChat refused that) is the first's: a
  // later one is named by forkpoint's id, so that the list saved back is no list naming one message twice.
  const seen = new Set<string>();
  return storedMessages(await s.history()).map((stored) => {
    const m = toUiMessage(stored);
    if (seen.has(m.id)) m.id = stored.first.id;
    seen.add(m.id);
    return m;
  }) as M[];
}

function modelInput(value: unknown, i: number): MessageInput {
  const m = record(value, `messages[${i}]`);
  if (typeof m.role !== "string") throw new ValidationError(`messages[${i}].role`, "must be a string");
  return {
    role: m.role,
    content: encodeValue(m.content, `messages[${i}].content`),
    ...(m.providerOptions !== undefined
      ? { metadata: { [PROVIDER_OPTIONS]: encodeValue(m.providerOptions, `messages[${i}].providerOptions`) } }
      : {}),
  };
}

/** A ModelMessage part naming a tool call: the call itself, its result, an approval asked for it. */
const MODEL_CALL_PARTS = new Set(["tool-call", "tool-result", "tool-approval-request"]);

/**
 * Whether a ModelMessage is a tool message answering tool approvals: the end of the request that runs the approved calls
 * (sent again, a retry, when the history goes on from it), never a regenerate's.
 */
const answersApprovals = (m: MessageInput): boolean =>
  m.role === "tool" &&
  Array.isArray(m.content) &&
  m.content.length > 0 &&
  m.content.every((p) => typeof p === "object" && p !== null && !Array.isArray(p) && p.type === "tool-approval-response");

/** The ids of the tool calls a ModelMessage's parts name (an assistant's `tool-call`s, a tool message's `tool-result`s). */
const modelCallsOf = (m: MessageInput): string[] =>
  Array.isArray(m.content)
    ? m.content.flatMap((p) =>
        typeof p === "object" &&
        p !== null &&
        !Array.isArray(p) &&
        typeof p.type === "string" &&
        MODEL_CALL_PARTS.has(p.type) &&
        typeof p.toolCallId === "string"
          ? [p.toolCallId]
          : [],
      )
    : [];

/** The tool and input of each `tool-call` part of a ModelMessage, by call id (see `callInputsOf`). */
const modelCallInputsOf = (m: MessageInput): [string, unknown][] =>
  Array.isArray(m.content)
    ? m.content.flatMap((p): [string, unknown][] =>
        typeof p === "object" &&
        p !== null &&
        !Array.isArray(p) &&
        p.type === "tool-call" &&
        typeof p.toolCallId === "string" &&
        p.input !== undefined
          ? [[p.toolCallId, [`tool-${String(p.toolName)}`, p.input]]]
          : [],
      )
    : [];

/**
 * `saveChat` for the AI SDK's `ModelMessage[]`: a `generateText` or `streamText` loop's `messages` with its
 * `responseMessages` added (every step's; ai@7's `response.messages` holds the final step's only). A list holding a
 * message that, by a tool call its `tool-call` or `tool-result` parts name, is only on another branch is refused as
 * `saveChat` refuses it (`ConflictError` `SESSION_MOVED`, nothing written).
 * @example await saveModelMessages(s, [...messages, ...result.responseMessages])
 */
export async function saveModelMessages(
  s: SessionHandle,
  messages: readonly ModelMessage[],
  options: SaveChatOptions = {},
): Promise<SaveResult> {
  return syncHistory(s, list(messages, "messages").map(modelInput), {
    sameAs: asParts,
    callsOf: modelCallsOf,
    callInputsOf: modelCallInputsOf,
    trackInputOf,
    resends: answersApprovals,
    ...optionsOf(options),
  });
}

/** The session's current history as `ModelMessage[]`, exactly as saved. */
export async function loadModelMessages(s: SessionHandle): Promise<ModelMessage[]> {
  return (await s.history()).map((m) => {
    const options = metadataOf(m.metadata, PROVIDER_OPTIONS);
    return { role: m.role, content: decodeValue(m.content), ...(options.found ? { providerOptions: options.value } : {}) } as ModelMessage;
  });
}
