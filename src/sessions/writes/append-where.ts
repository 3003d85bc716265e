// Writing messages where they were meant: on the current branch, after a given message, or only while the lineage
// ends where the caller read it; once per request. What append, turn and the AI SDK's saves write through.
import type { Message, MessageInput } from "../../models/types.js";
import type { Step, Tx } from "../../store/port/index.js";
import type { EngineContext, SessionRef } from "../core/context.js";
import { checkIfAt, type IfAt } from "../core/if-at.js";
import { ownedSession } from "../core/owned.js";
import { toMessage } from "../core/rows.js";
import { findLanding, settleLanding } from "../log/after.js";
import { lastLineageMessage } from "../log/lineage.js";
import { writeMessages, type EntryFields } from "../log/writer.js";
import { recordRequest, type Request } from "../requests/ledger.js";
import { batchFields } from "./message-fields.js";
import { afterMoves, currentToWrite } from "./after-moves.js";

/**
 * `append`, only while the current lineage's last message is still `lastMessageId` (null: none), as the caller read
 * it before deciding what to append: another writer (another app server saving the same chat) may have appended it
 * meanwhile. Returns null, having written nothing, when the last message is another. With `ifAt`, only while it holds
 * (else `ConflictError` `SESSION_MOVED`, nothing written).
 */
export async function appendAfter(
  ctx: EngineContext,
  ref: SessionRef,
  input: MessageInput[],
  lastMessageId: string | null,
  ifAt?: IfAt,
): Promise<Message[] | null> {
  return appendWhere(ctx, ref, batchFields(ctx, input), { lastMessageId, ifAt });
}

/**
 * `append` with `after: afterId`, unless what it would write is stored after that message already: `storedIn` is given
 * what follows it (for each message that follows `afterId` on some branch, that message and those after it there) and
 * whether the write would fork (no branch ends at `afterId`: what follows it elsewhere is all there is), and returns the
 * stored message that ends what this call would write, if any. Checked in the unit that would write, so the same save
 * made by several servers at once (a double submit, a retried request) is stored once. With `ifAt`, only while it holds.
 */
export async function appendAfterUnlessStored(
  ctx: EngineContext,
  ref: SessionRef,
  input: MessageInput[],
  afterId: string,
  storedIn: (tails: Message[][], forks: boolean) => Message | null,
  calls?: readonly string[],
  ifAt?: IfAt,
): Promise<{ written: Message[] } | { stored: Message }> {
  let stored: Message | null = null;
  const written = await appendWhere(ctx, ref, batchFields(ctx, input), {
    after: afterId,
    afterCalls: calls,
    ifAt,
    // Run again with the unit when the store runs it again: the last run's is what the committed unit saw.
    unlessStored: (tails, forks) => (stored = storedIn(tails, forks)) !== null,
  });
  return written ? { written } : { stored: stored! };
}

/**
 * What follows message `afterId` now (see `tailsAfter`; null: what begins a branch with no message before it), read in
 * a unit of its own: what a save looks at before it writes.
 */
export function messagesAfter(ctx: EngineContext, ref: SessionRef, afterId: string | null): Promise<Message[][]> {
  return ctx.store.read((tx) => messagesAfterUnit(tx, ref, afterId));
}

function* messagesAfterUnit(tx: Tx, ref: SessionRef, afterId: string | null): Step<Message[][]> {
  yield* ownedSession(tx, ref.id, ref.userId);
  return yield* tailsAfter(tx, ref.id, afterId);
}

/** What follows message `afterId`: each message after it, on any branch, with the messages after that one on its branch. */
export function* tailsAfter(tx: Tx, sessionId: string, afterId: string | null): Step<Message[][]> {
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
export interface AppendHow {
  lastMessageId?: string | null;
  after?: string | undefined;
  /**
   * The calls what is written names (an answer's tool parts: ids, or `ownCallKey`s): where several branches end at
   * `after`, and which of the calls following it a fork right after it keeps (see `forkRightAfter`).
   */
  afterCalls?: readonly string[] | undefined;
  unlessStored?: (tails: Message[][], forks: boolean) => boolean;
  request?: Request<Message[]> | undefined;
  ifAt?: IfAt | undefined;
}

/**
 * Writes `fields` on the current branch, unless `lastMessageId` is given and is not the lineage's last message's (or
 * `unlessStored` finds them stored): null then, nothing written; with `request`, records it in the same transaction.
 */
export async function appendWhere(ctx: EngineContext, ref: SessionRef, fields: EntryFields[], how: AppendHow) {
  const written = await afterMoves(ctx, ref, () => ctx.store.write({ sessionId: ref.id }, (tx) => appendUnit(tx, ref, ctx, fields, how)));
  if (!written) return null;
  for (const cp of written.checkpoints) ctx.events.emit("checkpoint", cp);
  return written.messages;
}

function* appendUnit(tx: Tx, ref: SessionRef, ctx: EngineContext, fields: EntryFields[], how: AppendHow) {
  const { session, branch, head } = yield* currentToWrite(ctx, tx, ref.id, ref.userId);
  yield* checkIfAt(tx, session, how.ifAt, head.position);
  const { lastMessageId } = how;
  if (lastMessageId !== undefined && ((yield* lastLineageMessage(tx, branch.id))?.id ?? null) !== lastMessageId) return null;
  // A fork right after `after` keeps the calls that follow it only while they are the answer's own (`afterCalls`): another
  // request's for the same message (a double submit's) stay off the answer's lineage.
  const own = how.afterCalls === undefined ? undefined : new Set(how.afterCalls);
  const at =
    how.after === undefined
      ? { branchId: branch.id, head }
      : yield* findLanding(tx, session, { branch, head }, how.after, how.afterCalls, own);
  if (
    how.unlessStored &&
    how.after !== undefined &&
    how.unlessStored(yield* tailsAfter(tx, session.id, how.after), "fork" in at && at.fork !== undefined)
  )
    return null;
  yield* settleLanding(ctx, tx, at);
  const written = yield* writeMessages(ctx, tx, session, at.branchId, at.head, fields);
  yield* recordRequest(ctx, tx, session.id, how.request, written.messages);
  return written;
}
