// append: add one or many messages to the current branch, in one transaction; turn: the same, then a checkpoint.
import type { MessageRow, Step, Tx } from "../store/port/index.js";
import { PayloadTooLargeError } from "../models/errors.js";
import { appendOptions, messageInput, parseInput, parseOptions, type AppendOptions } from "../models/inputs.js";
import { checkIfAt, type IfAt } from "./core/if-at.js";
import { toJsonText } from "../models/json.js";
import type { Message, MessageInput } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedCurrent } from "./core/owned.js";
import { toMessage } from "./core/rows.js";
import { findLanding, settleLanding } from "./log/after.js";
import { lastLineageMessage } from "./log/lineage.js";
import { writeMessages, type EntryFields } from "./log/writer.js";
import {
  applyOnce,
  quickRequest,
  recordRequest,
  sameJsonText,
  writtenRequestOf,
  type AnswerCodec,
  type Request,
} from "./requests/ledger.js";

/** Validates messages into entry fields before any write, so bad input leaves nothing behind. */
export function messageFields(ctx: EngineContext, input: unknown, field: string): EntryFields {
  const m = parseInput(messageInput, input, field);
  return {
    kind: "message",
    role: m.role,
    content: toJsonText(m.content, `${field}.content`, ctx.limits),
    clientId: m.clientId ?? null,
    metadata: m.metadata === undefined ? null : toJsonText(m.metadata, `${field}.metadata`, ctx.limits),
  };
}

/** One message or an array of them, validated into entry fields (at most `maxBatch`). */
export function batchFields(ctx: EngineContext, input: MessageInput | MessageInput[]): EntryFields[] {
  const list: unknown[] = Array.isArray(input) ? input : [input];
  if (list.length > ctx.limits.maxBatch) {
    throw new PayloadTooLargeError(
      "messages",
      `at most ${ctx.limits.maxBatch} messages per call (got ${list.length})`,
      ctx.limits.maxBatch,
    );
  }
  return list.map((m, i) => messageFields(ctx, m, Array.isArray(input) ? `messages[${i}]` : "message"));
}

/**
 * Messages one call wrote, as the request ledger keeps them: their branch, first position and count (they are
 * consecutive entries of one branch, and entries never change), read back whole for a retry.
 */
export const messagesAnswer: AnswerCodec<Message[]> = {
  encode: (messages) => JSON.stringify(messagesRange(messages)),
  *decode(tx: Tx, answer: string): Step<Message[]> {
    return yield* messagesIn(tx, JSON.parse(answer) as MessagesRange, toMessage);
  },
};

/** Where a call's messages are: their branch, first position and count (`[]`: none). */
export type MessagesRange = [] | [branchId: string, first: number, count: number];

export const messagesRange = (messages: readonly Message[]): MessagesRange =>
  messages.length === 0 ? [] : [messages[0]!.branchId, messages[0]!.position, messages.length];

/** The messages of `range`, each made by `map`. */
export function* messagesIn<T>(tx: Tx, range: MessagesRange, map: (row: MessageRow) => T): Step<T[]> {
  const out: T[] = [];
  if (range.length === 3) yield* tx.segmentMessages({ branchId: range[0], after: range[1] - 1, upTo: range[1] + range[2] - 1 }, map, out);
  return out;
}

/** A retried append's arguments are the first's when its messages are what the first wrote. */
function* sameMessages(tx: Tx, answer: string, fields: readonly EntryFields[]): Step<boolean> {
  return yield* wroteMessages(tx, JSON.parse(answer) as MessagesRange, fields);
}

/** Whether the messages of `range` are `fields` as written: the same roles, contents, client ids and metadata. */
export function* wroteMessages(tx: Tx, range: MessagesRange, fields: readonly EntryFields[]): Step<boolean> {
  if ((range[2] ?? 0) !== fields.length) return false;
  // `map` gets one reused row object: what is compared is copied out of it.
  const rows = yield* messagesIn(tx, range, (r) => [r.role, r.content, r.clientId, r.metadata]);
  return (
    rows.length === fields.length &&
    rows.every(([role, content, clientId, metadata], i) => {
      const f = fields[i]!;
      return (
        role === f.role &&
        clientId === (f.clientId ?? null) &&
        sameJsonText(content as string, f.content) &&
        sameJsonText(metadata, f.metadata)
      );
    })
  );
}

export async function append(
  ctx: EngineContext,
  ref: SessionRef,
  input: MessageInput | MessageInput[],
  options?: AppendOptions,
): Promise<Message[]> {
  const fields = batchFields(ctx, input);
  const { requestId, ifAt, after } = appendControlOf(options);
  // A retry is told apart by what the first call wrote (no hash of the messages on the way in); `after` is an argument
  // the messages do not hold.
  const request = writtenRequestOf(requestId, after === undefined ? "append" : `append>${after}`, messagesAnswer, sameMessages, fields);
  return applyOnce(ctx, ref, request, async () => (await appendWhere(ctx, ref, fields, { request, ifAt, after }))!);
}

/** `append` and `turn`'s last argument, validated (nothing to validate without one, little with `{ requestId }` alone). */
export function appendControlOf(options: AppendOptions | undefined): AppendOptions {
  return options === undefined ? {} : (quickRequest(options) ?? parseOptions(appendOptions, options, "options"));
}

/**
 * `append`, only while the current lineage's last message is still `lastMessageId` (null: none), as the caller read
 * it before deciding what to append: another writer (another app server saving the same chat) may have appended it
 * meanwhile. Returns null, having written nothing, when the last message is another.
 */
export async function appendAfter(
  ctx: EngineContext,
  ref: SessionRef,
  input: MessageInput[],
  lastMessageId: string | null,
): Promise<Message[] | null> {
  return appendWhere(ctx, ref, batchFields(ctx, input), { lastMessageId });
}

/**
 * `append` with `after: afterId`, unless what it would write is stored after that message already: `storedIn` is given
 * what follows it (for each message that follows `afterId` on some branch, that message and those after it there) and
 * returns the stored message that ends what this call would write, if any. Checked in the unit that would write, so
 * the same save made by several servers at once (a double submit, a retried request) is stored once.
 */
export async function appendAfterUnlessStored(
  ctx: EngineContext,
  ref: SessionRef,
  input: MessageInput[],
  afterId: string,
  storedIn: (tails: Message[][]) => Message | null,
): Promise<{ written: Message[] } | { stored: Message }> {
  let stored: Message | null = null;
  const written = await appendWhere(ctx, ref, batchFields(ctx, input), {
    after: afterId,
    // Run again with the unit when the store runs it again: the last run's is what the committed unit saw.
    unlessStored: (tails) => (stored = storedIn(tails)) !== null,
  });
  return written ? { written } : { stored: stored! };
}

/** What follows message `afterId`: each message after it, on any branch, with the messages after that one on its branch. */
function* tailsAfter(tx: Tx, sessionId: string, afterId: string): Step<Message[][]> {
  const tails: Message[][] = [];
  for (const first of yield* tx.versionsAfter(sessionId, afterId)) {
    const tail: Message[] = [];
    yield* tx.segmentMessages({ branchId: first.branchId, after: first.position - 1, upTo: Number.MAX_SAFE_INTEGER }, toMessage, tail);
    tails.push(tail);
  }
  return tails;
}

/**
 * How `appendWhere` writes: only after `lastMessageId` (null: none), only while `ifAt` holds, recording `request`; with
 * `after`, right after that message on its own lineage (see `findLanding`), and not at all when `unlessStored` finds
 * what follows it (see `appendAfterUnlessStored`).
 */
interface AppendHow {
  lastMessageId?: string | null;
  after?: string | undefined;
  unlessStored?: (tails: Message[][]) => boolean;
  request?: Request<Message[]> | undefined;
  ifAt?: IfAt | undefined;
}

/**
 * Writes `fields` on the current branch, unless `lastMessageId` is given and is not the lineage's last message's (or
 * `unlessStored` finds them stored): null then, nothing written; with `request`, records it in the same transaction.
 */
async function appendWhere(ctx: EngineContext, ref: SessionRef, fields: EntryFields[], how: AppendHow) {
  const written = await ctx.store.write({ sessionId: ref.id }, (tx) => appendUnit(tx, ref, ctx, fields, how));
  if (!written) return null;
  for (const cp of written.checkpoints) ctx.events.emit("checkpoint", cp);
  return written.messages;
}

function* appendUnit(tx: Tx, ref: SessionRef, ctx: EngineContext, fields: EntryFields[], how: AppendHow) {
  const { session, branch, head } = yield* ownedCurrent(tx, ref.id, ref.userId);
  yield* checkIfAt(tx, session, how.ifAt, head.position);
  const { lastMessageId } = how;
  if (lastMessageId !== undefined && ((yield* lastLineageMessage(tx, branch.id))?.id ?? null) !== lastMessageId) return null;
  if (how.unlessStored && how.after !== undefined && how.unlessStored(yield* tailsAfter(tx, session.id, how.after))) return null;
  const at = how.after === undefined ? { branchId: branch.id, head } : yield* findLanding(tx, session, { branch, head }, how.after);
  yield* settleLanding(ctx, tx, at);
  const written = yield* writeMessages(ctx, tx, session, at.branchId, at.head, fields);
  yield* recordRequest(ctx, tx, session.id, how.request, written.messages);
  return written;
}
