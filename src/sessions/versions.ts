// versions: the `< 2/3 >` siblings of a message — the messages that follow the same message (answers to one question).
import type { Versions } from "../models/types.js";
import type { BranchRow, MessageRow, Step, Tx } from "../store/port/index.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession, sessionMessage } from "./core/owned.js";
import { toMessage } from "./core/rows.js";

export async function versions(ctx: EngineContext, ref: SessionRef, messageId: string): Promise<Versions> {
  return ctx.store.read((tx) => versionsUnit(tx, ref, messageId));
}

/**
 * Two messages are versions of each other when the nearest message before each is the same message (or neither has
 * one): tool calls and state changes in between do not count, so an agent's regenerated answer is a version of the
 * first whatever tools each called. Ordered by creation.
 */
function* versionsUnit(tx: Tx, ref: SessionRef, messageId: string) {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  const { message, branch } = yield* sessionMessage(tx, session, messageId);
  const before = yield* messageBefore(tx, branch, message.position);
  const siblings = yield* tx.versionsAfter(session.id, before?.id ?? null);
  // A message a failed guarded block wrote is no version of the others: it stands alone.
  if (!siblings.some((m) => m.id === message.id))
    return { index: 0, count: 1, versions: [{ branchId: branch.id, message: toMessage(message) }] };
  return {
    index: siblings.findIndex((m) => m.id === message.id),
    count: siblings.length,
    versions: siblings.map((m) => ({ branchId: m.branchId, message: toMessage(m) })),
  } satisfies Versions;
}

/** The nearest message before `position` in `branch`'s lineage (undefined: none). */
export function* messageBefore(tx: Tx, branch: BranchRow, position: number): Step<MessageRow | undefined> {
  if (position <= 1) return undefined;
  const segments = yield* tx.lineage(branch.id, position - 1);
  for (let i = segments.length - 1; i >= 0; i--) {
    const found = yield* tx.lastSegmentMessage(segments[i]!);
    if (found) return found;
  }
  return undefined;
}
