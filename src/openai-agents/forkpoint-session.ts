// ForkpointSession: @openai/agents' Session on a forkpoint session; popItem, clearSession and suffix replacements fork
// instead of deleting, and history transactions are applied once per operation id.
import type {
  AgentInputItem,
  RunContext,
  RunContextAwareSession,
  Session,
  SessionHistoryTransaction,
  SessionHistoryTransactionArgs,
  SessionHistoryTransactionAwareSession,
} from "@openai/agents";
import { decodeValue, encodeValue } from "../adapters/json-codec.js";
import { ConflictError, ValidationError } from "../models/errors.js";
import { moveOptions as moveOptionsSchema, parseInput, requestId } from "../models/inputs.js";
import { assertJson, readingInput, type JsonObject, type JsonValue } from "../models/json.js";
import type { MoveOptions } from "../models/inputs.js";
import type { Message, MessageInput } from "../models/types.js";
import { selfMove } from "../adapters/loop-guard.js";
import { batchFields } from "../sessions/writes/message-fields.js";
import { CAUSED_AFTER_KEY, CAUSED_CALLS_KEY, CAUSED_WITH_KEY } from "../sessions/edit-point.js";
import { forkAfter } from "../sessions/fork-after.js";
import { canonicalJson } from "../sessions/integrity/hashes.js";
import { replaceTail, type TailReplacement } from "../sessions/replace-tail.js";
import { SessionHandle, sessionEngine } from "../sessions/session-handle.js";
import { currentHistory } from "../sessions/history.js";
import { appendServed, type Served } from "./run-landing.js";
import type { NamedCall } from "./call-items.js";
import { callsToName, madeCalls, namedCaused, runCallIds, useMemory, type RunMemory } from "./run-memory.js";

/** The forkpoint metadata that marks a message as an Agents item (its content is the item, as added). */
const ITEM_MARK: JsonObject = { openaiAgentsItem: true };

/** The verb the ledger records history transactions under (an operation id is a request id of the session). */
const TRANSACTION_VERB = "openai-agents.applyHistoryTransaction";

function toInput(item: AgentInputItem, field: string): MessageInput {
  if (typeof item !== "object" || item === null || Array.isArray(item)) throw new ValidationError(field, "must be an item object");
  const o = item as Record<string, unknown>;
  const role = typeof o.role === "string" ? o.role : typeof o.type === "string" ? o.type : null;
  if (role === null || role === "") throw new ValidationError(field, "has neither a role nor a type");
  return { role, content: checkedJson(item, field), metadata: ITEM_MARK };
}

/**
 * An item encoded and checked as JSON (a lone surrogate, NaN, a BigInt, a cycle: a `ValidationError` naming the path
 * as the caller wrote it) before anything compares or stores it. The session's own limits are checked when it writes.
 */
function checkedJson(item: unknown, field: string): JsonValue {
  const encoded = encodeValue(item, field);
  assertJson(encoded, field, { maxDepth: Number.MAX_SAFE_INTEGER });
  return encoded;
}

/**
 * A stored message as an item: as added when added here; another message (`s.append`, an edit through forkpoint, the
 * CLI or the web view) as an input message, its content as text. An assistant's is the SDK's assistant message item
 * (its content an array of `output_text`): the SDK's models read no other form of it.
 */
function toItem(m: Message): AgentInputItem {
  if (m.metadata?.openaiAgentsItem === true) return decodeValue(m.content) as AgentInputItem;
  const text = textOf(m);
  if (m.role === "assistant") return { type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text }] };
  return { role: m.role, content: text } as AgentInputItem;
}

/** A message written through forkpoint as an item's text: its content, as JSON when not a string. */
const textOf = (m: Message): string => (typeof m.content === "string" ? m.content : JSON.stringify(m.content));

/** The roles of a run's input messages: a function call before one that no result answers was left so (never run). */
const INPUT_ROLES = new Set(["user", "system", "developer"]);

/**
 * The items of `messages`, oldest first (see `toItem`). A function call's result edited through forkpoint (its text is
 * what the tool said) answers the oldest function call before it that no result answers, made since the last input
 * message (a call left unanswered before it, as a run stopped for an approval nobody gave, is no call it answers): the
 * SDK's models take a result only with its call's id and name.
 */
function toItems(messages: readonly Message[]): AgentInputItem[] {
  const open: { callId: string; name: string; namespace?: string }[] = [];
  return messages.map((m) => {
    const item = toItem(m);
    const role = (item as { role?: unknown }).role;
    if (m.role !== "function_call_result" && typeof role === "string" && INPUT_ROLES.has(role)) open.length = 0;
    if (item.type === "function_call") open.push({ callId: item.callId, name: item.name, namespace: item.namespace });
    const answered = item.type === "function_call_result" ? open.findIndex((c) => c.callId === item.callId) : -1;
    if (answered >= 0) open.splice(answered, 1);
    if (m.role !== "function_call_result" || m.metadata?.openaiAgentsItem === true || open.length === 0) return item;
    const { callId, name, namespace } = open.shift()!;
    const output = textOf(m);
    return { type: "function_call_result", callId, name, ...(namespace === undefined ? {} : { namespace }), status: "completed", output };
  });
}

/**
 * What an item is, compared deterministically: canonical JSON of its encoded form (key order aside, as the SDK's own
 * comparison has it), binary data as base64.
 */
const itemKey = (item: unknown, field = "item"): string => canonicalJson(checkedJson(item, field));
const inputKey = (input: MessageInput): string => canonicalJson(input.content);
const storedKey = (m: Message, served?: ReadonlyMap<string, AgentInputItem>): string => {
  if (m.metadata?.openaiAgentsItem === true) return canonicalJson(m.content);
  return itemKey(served?.get(m.id) ?? toItem(m));
};

/**
 * The messages of items written together, the first naming the function calls among them as caused by it, and the
 * message the run read last as it started (`after`, null: none; undefined: not known): the Runner saves a run's input
 * once the run's tool calls have run, journaled before it, and an edit of the input (`s.edit`, a chat's "edit
 * message", the CLI, the web view) then forks before them (those after `after`), so they are undone with it, or is
 * refused when another run's or writer's message landed after them. The items after the first and before the first
 * function call (the rest of the run's input, what the model said before its first call) say how far before them the
 * first lies: an edit of one takes the calls' items off the conversation too, so it forks where an edit of the first
 * would, and the items before it go on the new branch again. `made` (the calls the run made that no earlier write of
 * it named) are named too: a streamed run stopped (an abort, a move) saves its input alone, without its calls' items,
 * and an edit of that input undoes them all the same. The messages, and the calls named.
 */
function withCausedCalls(
  inputs: MessageInput[],
  items: readonly AgentInputItem[],
  after: string | null | undefined,
  made: readonly string[],
): { messages: MessageInput[]; named: string[] } {
  const callIds = [...new Set([...functionCallIds(items), ...made])];
  if (callIds.length === 0 || inputs.length === 0) return { messages: inputs, named: [] };
  const caused: JsonObject =
    after === undefined ? { [CAUSED_CALLS_KEY]: callIds } : { [CAUSED_CALLS_KEY]: callIds, [CAUSED_AFTER_KEY]: after };
  // Items without a function call (an input saved alone): all of them lie before the calls.
  const found = items.findIndex(isFunctionCall);
  const firstCall = found < 0 ? items.length : found;
  const messages = inputs.map((input, i) => {
    if (i === 0) return { ...input, metadata: { ...ITEM_MARK, ...caused } };
    return i < firstCall ? { ...input, metadata: { ...ITEM_MARK, [CAUSED_WITH_KEY]: i } } : input;
  });
  return { messages, named: callIds };
}

/** Whether an item is a function call with a `callId`. */
function isFunctionCall(item: AgentInputItem): boolean {
  const o = item as { type?: unknown; callId?: unknown };
  return o.type === "function_call" && typeof o.callId === "string";
}

/** The `callId`s of the function calls among the items, each once. */
function functionCallIds(items: readonly AgentInputItem[]): string[] {
  const callIds = new Set<string>();
  for (const item of items) if (isFunctionCall(item)) callIds.add((item as { callId: string }).callId);
  return [...callIds];
}

/**
 * The calls of the `function_call_result` items among the items whose call is not among them (each by its id and
 * tool): the results of a run resumed after an approval, whose calls were saved when it stopped.
 */
function answeredCalls(items: readonly AgentInputItem[]): NamedCall[] {
  const made = new Set(functionCallIds(items));
  const answered = new Map<string, NamedCall>();
  for (const item of items) {
    const o = item as { type?: unknown; callId?: unknown; name?: unknown };
    if (o.type !== "function_call_result" || typeof o.callId !== "string" || made.has(o.callId)) continue;
    answered.set(o.callId, typeof o.name === "string" ? { callId: o.callId, name: o.name } : { callId: o.callId });
  }
  return [...answered.values()];
}

/** An array of items argument, checked before anything is written. */
function itemsOf(value: unknown, field: string): AgentInputItem[] {
  if (!Array.isArray(value)) throw new ValidationError(field, "must be an array of items");
  return value as AgentInputItem[];
}

/**
 * A forkpoint session as the Agents SDK's conversation memory: `run(agent, input, { session: new ForkpointSession(s) })`.
 * Each item is one forkpoint message on the current branch, returned exactly as added. `popItem`, `clearSession` and a
 * replaced suffix are moves, not deletions: a new branch forked after the item before them (or at the start) becomes
 * current, and tool effects after that point are undone (`moveOptions` apply); the old branch stays (`s.branches()`).
 * History transactions (`applyHistoryTransaction`, what the Runner uses around output guardrails) are atomic and
 * applied once per operation id, whoever retries them (another handle, process or server).
 */
export class ForkpointSession implements Session, RunContextAwareSession, SessionHistoryTransactionAwareSession {
  /**
   * The Runner passes its run context to each history operation: the run's tools (`undoableAgentTools`) then know which
   * memory is the run's, whose own pops and clears they follow. Nothing stored depends on it.
   */
  readonly acceptsRunContext = true as const;
  readonly #s: SessionHandle;
  readonly #moveOptions: MoveOptions | undefined;
  /** What the run was given (or wrote last): where its items go when the session moved meanwhile; null until read. */
  #served: Served | null = null;
  /** The branch last read here or moved to by this memory's own pop, clear or replacement (null: none yet). */
  #branch: string | null = null;
  /** This memory as its runs' tools see it. */
  readonly #memory: RunMemory;
  /**
   * Per run (its run context): the last message the run read as it started, or wrote since (null: none). The run's
   * tool calls are journaled after it: its input names it, so that an edit of the input finds them all, wherever the
   * items of other runs on this memory landed meanwhile.
   */
  readonly #runs = new WeakMap<object, string | null>();

  constructor(session: SessionHandle, options: { moveOptions?: MoveOptions } = {}) {
    if (!(session instanceof SessionHandle))
      throw new ValidationError("session", "ForkpointSession expects a session handle (from fp.createSession or fp.getSession)");
    if (typeof options !== "object" || options === null) throw new ValidationError("options", "must be an object when given");
    // Read once, through the check: a getter that throws (or a revoked proxy) is a bad option, not a TypeError.
    const { moveOptions: given, ...unknown } = readingInput(() => ({ ...options }), "options");
    if (Object.keys(unknown).length > 0) throw new ValidationError("options", `unknown option(s): ${Object.keys(unknown).join(", ")}`);
    this.#s = session;
    this.#moveOptions = given === undefined ? undefined : parseInput(moveOptionsSchema, given, "options.moveOptions");
    this.#memory = { sessionId: session.id, branch: () => this.#branch };
  }

  /** The forkpoint session's id. */
  async getSessionId(): Promise<string> {
    return this.#s.id;
  }

  /** The current branch's items, oldest first; with `limit`, the last `limit` of them. */
  async getItems(limit?: number, runContext?: RunContext): Promise<AgentInputItem[]> {
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 0))
      throw new ValidationError("limit", "must be a non-negative integer");
    useMemory(runContext, this.#memory);
    const { branchId, messages } = await sessionEngine(this.#s).run((ctx, ref) => currentHistory(ctx, ref));
    this.#served = { branchId, lastMessageId: messages.at(-1)?.id ?? null };
    this.#branch = branchId;
    // A run's first read (the Runner reads again as it saves a run an output guardrail stopped: that is not its start).
    if (typeof runContext === "object" && runContext !== null && !this.#runs.has(runContext))
      this.#runs.set(runContext, this.#served.lastMessageId);
    const items = toItems(messages);
    return limit === undefined ? items : limit === 0 ? [] : items.slice(-limit);
  }

  /**
   * Appends the items (one transaction) on the current branch while it is the branch this session last read
   * (`getItems`, which the Runner calls as a run starts) or wrote, or its lineage still holds the last item read or
   * written and the tool calls the items name. When the session moved back before them meanwhile (another handle,
   * process or server rolled back, edited, switched or popped, undoing the run's tool calls), they go right after that
   * item, on its lineage, as `append`'s `after` has it: on the run's branch while it ends there, else on a new branch
   * forked right after it. The current branch stays as the user left it. A session never read from appends.
   */
  async addItems(items: AgentInputItem[], runContext?: RunContext): Promise<void> {
    useMemory(runContext, this.#memory);
    if (itemsOf(items, "items").length === 0) return;
    const { messages: inputs, named } = this.#caused(
      items.map((item, i) => toInput(item, `items[${i}]`)),
      items,
      runContext,
    );
    const served = this.#served;
    const answered = answeredCalls(items);
    // A resumed run's results go only where their calls are: never into a conversation another tab moved to.
    if (served || answered.length > 0) {
      this.#served = await sessionEngine(this.#s).run((ctx, ref) =>
        appendServed(
          ctx,
          ref,
          batchFields(ctx, inputs),
          served,
          runCallIds(runContext, functionCallIds(items)),
          answered,
          madeCalls(runContext),
        ),
      );
      this.#ranTo(runContext, this.#served?.lastMessageId, named);
      return;
    }
    const last = (await this.#s.append(inputs)).at(-1)!;
    this.#served = { branchId: last.branchId, lastMessageId: last.id };
    this.#ranTo(runContext, last.id, named);
  }

  /**
   * `withCausedCalls` for a write of the run of `runContext`: after the message it started after (or wrote last), the
   * function calls among the items and, unless the items answer calls saved before them (a resumed run's results),
   * the calls it made that no earlier write of it named. Those are named, or passed over, once the write is done.
   */
  #caused(inputs: MessageInput[], items: readonly AgentInputItem[], runContext: RunContext | undefined) {
    const pending = callsToName(runContext);
    const made = answeredCalls(items).length === 0 ? pending : [];
    const caused = withCausedCalls(inputs, items, this.#runStart(runContext), made);
    return { messages: caused.messages, named: [...caused.named, ...pending] };
  }

  /**
   * Where the calls of the run writing now were journaled after: the last message it read as it started or wrote
   * since; for a write outside a run, the last this memory read or wrote (undefined: not known).
   */
  #runStart(runContext: RunContext | undefined): string | null | undefined {
    if (typeof runContext === "object" && runContext !== null && this.#runs.has(runContext)) return this.#runs.get(runContext);
    return this.#served ? this.#served.lastMessageId : undefined;
  }

  /** The run wrote up to that message, naming `named` as caused: what it writes next was caused after it. */
  #ranTo(runContext: RunContext | undefined, lastMessageId: string | null | undefined, named: readonly string[]): void {
    namedCaused(runContext, named);
    if (typeof runContext === "object" && runContext !== null && typeof lastMessageId === "string")
      this.#runs.set(runContext, lastMessageId);
  }

  /**
   * The Runner's compaction (a `compaction` item, then the items it keeps): appended on the current branch, as the
   * SDK allows for stores that treat the leading compaction item as where history starts (the Runner reads from the
   * latest one). Without this the Runner would clear the session, a move that undoes every tool call before it.
   */
  async replaceHistoryWithCompaction(items: AgentInputItem[], runContext?: RunContext): Promise<void> {
    await this.addItems(items, runContext);
  }

  /**
   * Removes the last item: a new branch forked right after the item before it becomes current (the old branch keeps
   * it), so tool calls made between the two are undone with it. The item is read in the transaction that forks: an
   * item added meanwhile (by another handle, process or server) is either the one popped or stays. The Runner saves a
   * run's items once the run is over, after its tool calls: popping its answer, results and calls leaves the calls
   * applied; popping back to and including its input undoes them, and so does an edit of the input (its message names
   * the calls the run made). Both are refused (`ConflictError` `RUN_INTERLEAVED`, nothing changed) when another
   * writer's message landed after the run's calls and before its input. `undefined` when there is no item.
   */
  async popItem(runContext?: RunContext): Promise<AgentInputItem | undefined> {
    useMemory(runContext, this.#memory);
    const served = await this.#servedItems();
    const popped = await this.#replace({ count: 1, messages: [] });
    const last = popped?.replaced[0];
    return last && (served.get(last.id) ?? toItem(last));
  }

  /**
   * The current branch's messages as `getItems` reads them, by message id: an edited function call result is the
   * result of a call before it, which its message alone does not say. Messages never change: one added after this read
   * is read alone (`toItem`).
   */
  async #servedItems(): Promise<Map<string, AgentInputItem>> {
    const { messages } = await sessionEngine(this.#s).run((ctx, ref) => currentHistory(ctx, ref));
    const items = toItems(messages);
    return new Map(messages.map((m, i) => [m.id, items[i]!]));
  }

  /** Goes back to an empty conversation on a new branch forked at the start; the old branch stays in the tree. */
  async clearSession(runContext?: RunContext): Promise<void> {
    useMemory(runContext, this.#memory);
    const [history, track] = await Promise.all([this.#s.history(), this.#s.toolTrack()]);
    if (history.length === 0 && track.length === 0) return;
    const moved = await selfMove(this.#s.id, () => sessionEngine(this.#s).run((ctx, ref) => forkAfter(ctx, ref, null, this.#moveOptions)));
    this.#served = { branchId: moved.branch.id, lastMessageId: null };
    this.#branch = moved.branch.id;
  }

  /**
   * Applies a history transaction atomically (all of its items or none) and once per `operationId`: the same id again,
   * from any handle, process or server, changes nothing and succeeds as the first call did; with another transaction
   * it is a `ConflictError` (`REQUEST_ID_REUSED`) and nothing changes. `append_items` appends where `addItems` would
   * (after the item last read or written, off a branch the session moved to meanwhile). `replace_suffix` checks
   * that the current branch ends with `expectedSuffix` (items compared as canonical JSON; else `ConflictError`
   * `SUFFIX_MISMATCH`, nothing changed) and replaces it: items the replacement starts with stay; after them, a new branch
   * forked right after the last item kept (or the item before the suffix) takes the rest of the replacement, as
   * `popItem` forks. A replacement that starts with the whole suffix only appends.
   */
  async applyHistoryTransaction(args: SessionHistoryTransactionArgs, runContext?: RunContext): Promise<void> {
    useMemory(runContext, this.#memory);
    if (typeof args !== "object" || args === null) throw new ValidationError("args", "must be { operationId, transaction }");
    const id = parseInput(requestId, args.operationId, "operationId");
    const transaction: SessionHistoryTransaction | null = typeof args.transaction === "object" ? args.transaction : null;
    if (transaction?.type === "append_items") {
      const inputs = itemsOf(transaction.items, "transaction.items").map((item, i) => toInput(item, `transaction.items[${i}]`));
      const { messages, named } = this.#caused(inputs, transaction.items, runContext);
      const request = { id, verb: TRANSACTION_VERB, args: { type: "append_items", items: inputs.map(inputKey) } };
      const served = this.#served;
      const answered = answeredCalls(transaction.items);
      // The Runner saves a run an output guardrail stopped this way: its items follow what the run read, as addItems'.
      if ((served || answered.length > 0) && messages.length > 0) {
        const calls = runCallIds(runContext, functionCallIds(transaction.items));
        const last = await sessionEngine(this.#s).run((ctx, ref) =>
          appendServed(ctx, ref, batchFields(ctx, messages), served, calls, answered, madeCalls(runContext), request),
        );
        // A retry of an operation applied where it did not say (from a session never read): what was read still holds.
        if (last) this.#served = last;
        this.#ranTo(runContext, last?.lastMessageId, named);
        return;
      }
      this.#ranTo(runContext, (await this.#replace({ count: 0, messages }, request))?.messages.at(-1)?.id, named);
      return;
    }
    if (transaction?.type !== "replace_suffix") throw new ValidationError("transaction.type", 'must be "append_items" or "replace_suffix"');
    const expected = itemsOf(transaction.expectedSuffix, "transaction.expectedSuffix").map((item, i) =>
      itemKey(item, `transaction.expectedSuffix[${i}]`),
    );
    const inputs = itemsOf(transaction.replacement, "transaction.replacement").map((item, i) =>
      toInput(item, `transaction.replacement[${i}]`),
    );
    const replacing = inputs.map(inputKey);
    let keep = 0;
    while (keep < expected.length && keep < replacing.length && expected[keep] === replacing[keep]) keep++;
    const served = await this.#servedItems();
    const check = (tail: Message[]) => {
      if (tail.length !== expected.length || tail.some((m, i) => storedKey(m, served) !== expected[i]))
        throw new ConflictError(
          "the session's history no longer ends with the transaction's expected suffix: nothing was changed",
          "SUFFIX_MISMATCH",
        );
    };
    const request = { id, verb: TRANSACTION_VERB, args: { type: "replace_suffix", expectedSuffix: expected, replacement: replacing } };
    const { messages: written, named } = this.#caused(
      inputs.slice(keep),
      (transaction.replacement as AgentInputItem[]).slice(keep),
      runContext,
    );
    this.#ranTo(
      runContext,
      (await this.#replace({ count: expected.length, keep, messages: written, check }, request))?.messages.at(-1)?.id,
      named,
    );
  }

  /**
   * The session's own tail replacement (made between runs, or by the Runner for its own run): the session's wrapped
   * tools go on from the new branch, so the same Agent runs again, where an outside rollback or switch stops them.
   */
  async #replace(
    r: Omit<TailReplacement, "messages"> & { messages: MessageInput[] },
    request?: { id: string; verb: string; args: JsonValue },
  ) {
    const done = await selfMove(this.#s.id, () =>
      sessionEngine(this.#s).run((ctx, ref) => {
        const messages = r.messages.length === 0 ? [] : batchFields(ctx, r.messages);
        return replaceTail(ctx, ref, { ...r, messages }, { moveOptions: this.#moveOptions, ...(request ? { request } : {}) });
      }),
    );
    // Its own move: what follows goes on the current branch again (the last item known when it wrote one). An append
    // of no item moved nothing: what was read still holds.
    const last = done?.messages.at(-1);
    if (last) this.#served = { branchId: last.branchId, lastMessageId: last.id };
    else if (done === null || done.move !== null) this.#served = null;
    if (done?.move) this.#branch = done.move.branch.id;
    return done;
  }
}
