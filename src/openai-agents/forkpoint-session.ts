// ForkpointSession: @openai/agents' Session on a forkpoint session; popItem and clearSession fork instead of deleting.
import type { AgentInputItem, Session } from "@openai/agents";
import { decodeValue, encodeValue } from "../adapters/json-codec.js";
import { ValidationError } from "../models/errors.js";
import type { JsonObject } from "../models/json.js";
import type { MoveOptions } from "../models/inputs.js";
import type { Message, MessageInput } from "../models/types.js";
import { selfMove } from "../adapters/loop-guard.js";
import { batchFields } from "../sessions/append.js";
import { forkAfter } from "../sessions/fork-after.js";
import { replaceTail, type TailReplacement } from "../sessions/replace-tail.js";
import { SessionHandle, sessionEngine } from "../sessions/session-handle.js";

/** The forkpoint metadata that marks a message as an Agents item (its content is the item, as added). */
const ITEM_MARK: JsonObject = { openaiAgentsItem: true };

function toInput(item: AgentInputItem, field: string): MessageInput {
  if (typeof item !== "object" || item === null || Array.isArray(item)) throw new ValidationError(field, "must be an item object");
  const o = item as Record<string, unknown>;
  const role = typeof o.role === "string" ? o.role : typeof o.type === "string" ? o.type : null;
  if (role === null || role === "") throw new ValidationError(field, "has neither a role nor a type");
  return { role, content: encodeValue(item), metadata: ITEM_MARK };
}

/** A stored message as an item: as added when added here; another message (`s.append`) as an easy input message. */
function toItem(m: Message): AgentInputItem {
  if (m.metadata?.openaiAgentsItem === true) return decodeValue(m.content) as AgentInputItem;
  return { role: m.role, content: typeof m.content === "string" ? m.content : JSON.stringify(m.content) } as AgentInputItem;
}

/** An array of items argument, checked before anything is written. */
function itemsOf(value: unknown, field: string): AgentInputItem[] {
  if (!Array.isArray(value)) throw new ValidationError(field, "must be an array of items");
  return value as AgentInputItem[];
}

/**
 * A forkpoint session as the Agents SDK's conversation memory: `run(agent, input, { session: new ForkpointSession(s) })`.
 * Each item is one forkpoint message on the current branch, returned exactly as added. `popItem` and `clearSession` are
 * moves, not deletions: a new branch forked after the item before the last (or at the start) becomes current, and tool
 * effects after that point are undone (`moveOptions` apply); the old branch stays in the tree (`s.branches()`).
 */
export class ForkpointSession implements Session {
  readonly #s: SessionHandle;
  readonly #moveOptions: MoveOptions | undefined;

  constructor(session: SessionHandle, options: { moveOptions?: MoveOptions } = {}) {
    if (!(session instanceof SessionHandle))
      throw new ValidationError("session", "ForkpointSession expects a session handle (from fp.createSession or fp.getSession)");
    this.#s = session;
    this.#moveOptions = options.moveOptions;
  }

  /** The forkpoint session's id. */
  async getSessionId(): Promise<string> {
    return this.#s.id;
  }

  /** The current branch's items, oldest first; with `limit`, the last `limit` of them. */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    if (limit !== undefined && !(Number.isInteger(limit) && limit >= 0))
      throw new ValidationError("limit", "must be a non-negative integer");
    const history = await this.#s.history();
    const kept = limit === undefined ? history : limit === 0 ? [] : history.slice(-limit);
    return kept.map(toItem);
  }

  /** Appends the items (one transaction). */
  async addItems(items: AgentInputItem[]): Promise<void> {
    if (itemsOf(items, "items").length === 0) return;
    await this.#s.append(items.map((item, i) => toInput(item, `items[${i}]`)));
  }

  /**
   * The Runner's compaction (a `compaction` item, then the items it keeps): appended on the current branch, as the
   * SDK allows for stores that treat the leading compaction item as where history starts (the Runner reads from the
   * latest one). Without this the Runner would clear the session, a move that undoes every tool call before it.
   */
  async replaceHistoryWithCompaction(items: AgentInputItem[]): Promise<void> {
    await this.addItems(items);
  }

  /**
   * Removes the last item: a new branch forked right after the item before it becomes current (the old branch keeps
   * it), so tool calls made between the two are undone with it. The item is read in the transaction that forks: an
   * item added meanwhile (by another handle, process or server) is either the one popped or stays. The Runner saves a
   * run's input once its first turn's tool calls have run: popping a run's items back to and including its input
   * undoes them. `undefined` when there is no item.
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    const popped = await this.#replace({ count: 1, messages: [] });
    const last = popped?.replaced[0];
    return last && toItem(last);
  }

  /** Goes back to an empty conversation on a new branch forked at the start; the old branch stays in the tree. */
  async clearSession(): Promise<void> {
    const [history, track] = await Promise.all([this.#s.history(), this.#s.toolTrack()]);
    if (history.length === 0 && track.length === 0) return;
    await selfMove(this.#s.id, () => sessionEngine(this.#s).run((ctx, ref) => forkAfter(ctx, ref, null, this.#moveOptions)));
  }

  /**
   * The session's own tail replacement (made between runs): the session's wrapped
   * tools go on from the new branch, so the same Agent runs again, where an outside rollback or switch stops them.
   */
  #replace(r: Omit<TailReplacement, "messages"> & { messages: MessageInput[] }) {
    return selfMove(this.#s.id, () =>
      sessionEngine(this.#s).run((ctx, ref) => {
        const messages = r.messages.length === 0 ? [] : batchFields(ctx, r.messages);
        return replaceTail(ctx, ref, { ...r, messages }, { moveOptions: this.#moveOptions });
      }),
    );
  }
}
