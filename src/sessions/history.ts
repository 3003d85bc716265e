// history: the messages of a branch's lineage (or a page of them, with their versions), read in one unit.
import { historyInput, parseOptions, type HistoryOptions } from "../models/inputs.js";
import type { Message, MessageVersions, VersionedMessage } from "../models/types.js";
import type { MessageRow, Step, Tx, VersionRow } from "../store/port/index.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession } from "./core/owned.js";
import { checkIfAt, type IfAt } from "./core/if-at.js";
import { toMessage } from "./core/rows.js";
import { branchOf, lineageMessages } from "./log/lineage.js";
import { servedAfterMoves, currentToServe } from "./writes/after-moves.js";

export async function history(ctx: EngineContext, ref: SessionRef, options: HistoryOptions = {}): Promise<(Message | VersionedMessage)[]> {
  const o = parseOptions(historyInput, options ?? {}, "options");
  return ctx.store.read((tx) => historyUnit(tx, ref, o));
}

/**
 * The current branch's whole history with that branch's id, read in one unit: what a save compares a chat with, and
 * the branch its edit or fork must still start from (`ifAt`) when it is made. With `ifAt`, read only while it holds
 * (else `ConflictError` `SESSION_MOVED`).
 */
export async function currentHistory(ctx: EngineContext, ref: SessionRef, ifAt?: IfAt): Promise<{ branchId: string; messages: Message[] }> {
  // What a run is served: a move stopped midway is finished first, as the write that follows would finish it.
  return servedAfterMoves(ctx, ref, () => ctx.store.read((tx) => currentHistoryUnit(ctx, tx, ref, ifAt)));
}

function* currentHistoryUnit(ctx: EngineContext, tx: Tx, ref: SessionRef, ifAt: IfAt | undefined) {
  const { session } = yield* currentToServe(ctx, tx, ref.id, ref.userId);
  yield* checkIfAt(tx, session, ifAt);
  return { branchId: session.currentBranchId, messages: yield* lineageMessages(tx, session.currentBranchId, toMessage) };
}

function* historyUnit(tx: Tx, ref: SessionRef, o: HistoryOptions) {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  const branch = yield* branchOf(tx, session, o.branchId ?? session.currentBranchId);
  const paged = o.limit !== undefined || o.before !== undefined;
  const upTo = o.before === undefined ? undefined : o.before - 1;
  // Without a page, the whole lineage in one walk (the long read's fast path).
  if (!o.withVersions)
    return paged ? (yield* lastMessages(tx, branch.id, upTo, o.limit)).map(toMessage) : yield* lineageMessages(tx, branch.id, toMessage);
  // With versions, one message more than the page where there is one: the message before the page's first, whose
  // versions-anchor it is (a message's versions follow the same message), read in the same walk.
  const rows = paged ? yield* lastMessages(tx, branch.id, upTo, o.limit === undefined ? undefined : o.limit + 1) : null;
  const before = rows && o.limit !== undefined && rows.length > o.limit ? rows.shift()! : null;
  const page = rows ? rows.map(toMessage) : yield* lineageMessages(tx, branch.id, toMessage);
  return yield* withVersions(tx, session.id, page, before?.id ?? null);
}

/** The last `limit` messages (all when undefined) of a lineage up to `upTo`, oldest first: newest segments read first. */
function* lastMessages(tx: Tx, branchId: string, upTo: number | undefined, limit: number | undefined): Step<MessageRow[]> {
  const segments = yield* tx.lineage(branchId, upTo);
  const pieces: MessageRow[][] = [];
  let left = limit ?? Number.MAX_SAFE_INTEGER;
  for (let i = segments.length - 1; i >= 0 && left > 0; i--) {
    const rows = yield* tx.lastSegmentMessages(segments[i]!, left);
    pieces.unshift(rows);
    left -= rows.length;
  }
  return pieces.flat();
}

/**
 * Each message with its `< i/n >` versions, read for the whole page in one store call: a message's versions are the
 * messages that follow the same message as it does (`first` for the page's first one; null: none before it).
 */
function* withVersions(tx: Tx, sessionId: string, page: Message[], first: string | null): Step<VersionedMessage[]> {
  const anchors = page.map((m, i) => ({ ofId: m.id, anchorId: i === 0 ? first : page[i - 1]!.id }));
  return versionedPage(page, yield* tx.messageVersions(sessionId, anchors));
}

/**
 * The page's messages with their versions, from the store's rows (ordered by message, then creation). Linear in the
 * rows: a message with thousands of versions (regenerated answers) costs what its `branchIds` hold.
 */
export function versionedPage(page: Message[], rows: readonly VersionRow[]): VersionedMessage[] {
  const byMessage = new Map<string, { index: Map<string, number>; branchIds: string[] }>();
  for (const row of rows) {
    let versions = byMessage.get(row.ofId);
    if (!versions) byMessage.set(row.ofId, (versions = { index: new Map(), branchIds: [] }));
    const id = row.id;
    // A branch forked at the same entry may also be the entry's own branch: each version once.
    if (versions.index.has(id)) continue;
    versions.index.set(id, versions.branchIds.length);
    versions.branchIds.push(row.branchId);
  }
  return page.map((m) => {
    const found = byMessage.get(m.id);
    // Not among its anchor's versions (a failed guarded block wrote it): it stands alone.
    const index = found?.index.get(m.id);
    const versions: MessageVersions =
      found && index !== undefined
        ? { index, count: found.branchIds.length, branchIds: found.branchIds }
        : { index: 0, count: 1, branchIds: [m.branchId] };
    return { ...m, versions };
  });
}
