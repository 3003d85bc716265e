// versions: the `< 2/3 >` siblings of a message — messages at the same position whose lineages share everything before it.
import type { Versions } from "../models/types.js";
import type { EntryRow, Tx } from "../store/port/index.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession, sessionMessage } from "./core/owned.js";
import { toMessage } from "./core/rows.js";
import { entryAt } from "./log/lineage.js";

export async function versions(ctx: EngineContext, ref: SessionRef, messageId: string): Promise<Versions> {
  return ctx.store.read((tx) => versionsUnit(tx, ctx, ref, messageId));
}

function* versionsUnit(tx: Tx, ctx: EngineContext, ref: SessionRef, messageId: string) {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  const { message, branch } = yield* sessionMessage(tx, session, messageId);
  const position = message.position;
  // Entry ids identify a whole prefix, so siblings are the children of the entry just before this one.
  const anchor = yield* entryAt(tx, branch, position - 1);
  const candidates: (EntryRow | undefined)[] = [];
  if (anchor) candidates.push(yield* tx.ownEntryAt(anchor.branchId, position));
  for (const b of yield* tx.branchesForkedAt(session.id, anchor ? anchor.id : null)) candidates.push(yield* tx.ownEntryAt(b.id, position));
  const seen = new Set<string>();
  const siblings = candidates
    .filter((e): e is EntryRow => e !== undefined && e.kind === "message" && !seen.has(e.id) && seen.add(e.id) !== undefined)
    .sort((a, b) => a.seq - b.seq);
  return {
    index: siblings.findIndex((e) => e.id === message.id),
    count: siblings.length,
    versions: siblings.map((e) => ({ branchId: e.branchId, message: toMessage(e) })),
  };
}
