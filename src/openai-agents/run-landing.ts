// Where a run's items land when the session moved while it ran: after what it was served, never on the moved-to branch.
import type { Message } from "../models/types.js";
import type { BranchRow, SessionRow, Step, Tx } from "../store/port/index.js";
import type { EngineContext, SessionRef } from "../sessions/core/context.js";
import { sessionMessage } from "../sessions/core/owned.js";
import { headOf } from "../sessions/core/head.js";
import { findLanding, forkRightAfter, settleLanding, type Landing } from "../sessions/log/after.js";
import { branchOf, entryAt, lastLineageMessage } from "../sessions/log/lineage.js";
import { writeMessages, type EntryFields } from "../sessions/log/writer.js";
import { applyOnce, recordRequest, requestOf, type AnswerCodec } from "../sessions/requests/ledger.js";
import { afterMoves, currentToWrite } from "../sessions/writes/after-moves.js";
import { refuseCallsOffLineage, refuseCallsRunElsewhere, type NamedCall } from "./call-items.js";

/** What a run was given: the branch it read and that branch's last message (null: none), or what it wrote last. */
export interface Served {
  branchId: string;
  lastMessageId: string | null;
}

/**
 * Writes `fields` on the current branch (after whatever was written there meanwhile, as a plain append) while it is
 * the branch the run was served from, or its lineage still holds the last item served and the run's journaled tool
 * calls. Once the session moved back before them (a rollback, edit, switch or pop by another handle, process or
 * server, which undid the run's tool calls), `append`'s `after` rule with the run's branch in place of the current
 * one: on the run's branch while it still ends at that item (after the run's own tool calls), else on a new branch
 * forked right after it; never on the current branch, which stays as the user left it. `calls` (the run's function
 * call ids) tell the run's branch where several end at that item. `served` null (a memory never read): the current
 * branch. `answered` (the calls whose results the items hold without their calls: a run resumed after an
 * approval) must not be calls only another branch holds, else `ConflictError` `SESSION_MOVED`, nothing written, nor
 * calls another run (not one of `made`, the calls the writing run made) journaled there, else `CALL_ANSWERED`. With
 * `request` (a history transaction's operation id), it is recorded in the same transaction and applied once. What the
 * run wrote last, where what follows goes; null for a request an earlier call applied without telling where
 * (`replaceTail`'s, from a session never read).
 */
export async function appendServed(
  ctx: EngineContext,
  ref: SessionRef,
  fields: EntryFields[],
  served: Served | null,
  calls: readonly string[],
  answered: readonly NamedCall[],
  made: ReadonlySet<string>,
  request?: { id: string; verb: string; args: unknown },
): Promise<Served | null> {
  const recorded = request && requestOf(request.id, request.verb, request.args, LAST_WRITTEN);
  return applyOnce(ctx, ref, recorded, async () => {
    const written = await afterMoves(ctx, ref, () =>
      ctx.store.write({ sessionId: ref.id }, (tx) => servedUnit(ctx, tx, ref, fields, served, calls, answered, made, recorded)),
    );
    for (const cp of written.checkpoints) ctx.events.emit("checkpoint", cp);
    return lastOf(written.messages);
  });
}

const lastOf = (messages: Message[]): Served => {
  const last = messages.at(-1)!;
  return { branchId: last.branchId, lastMessageId: last.id };
};

/**
 * A history transaction's answer in the ledger: where its last item went, so that a retry (a resumed run) goes on
 * after it. `replaceTail`'s answer for the same operation is "null": such a retry learns nothing.
 */
const LAST_WRITTEN: AnswerCodec<Served | null> = {
  encode: (value) => JSON.stringify(value),
  *decode(_tx, answer) {
    const value = JSON.parse(answer) as Partial<Served> | null;
    return typeof value?.branchId === "string" && typeof value.lastMessageId === "string"
      ? { branchId: value.branchId, lastMessageId: value.lastMessageId }
      : null;
  },
};

/** Why a resumed run's result is refused when another resume of its approval wrote one. */
const ONCE_ANSWERED = "nothing was written (undoableAgentTools ran the call once, for both)";

/** Why a result is refused for a call another resume of its approval ran (or runs): that resume's result stands. */
const RAN_ELSEWHERE = "its result is that run's, not this one's: nothing was written";

function* servedUnit(
  ctx: EngineContext,
  tx: Tx,
  ref: SessionRef,
  fields: EntryFields[],
  served: Served | null,
  calls: readonly string[],
  answered: readonly NamedCall[],
  made: ReadonlySet<string>,
  request: ReturnType<typeof requestOf<Served | null>>,
) {
  const { session, branch, head } = yield* currentToWrite(ctx, tx, ref.id, ref.userId);
  const follows = served === null || branch.id === served.branchId || (yield* continues(tx, session, branch, served, calls));
  const at = follows ? { branchId: branch.id, head } : yield* movedLanding(tx, session, branch.id, served, calls);
  yield* settleLanding(ctx, tx, at);
  const opens = yield* refuseCallsOffLineage(tx, session.id, at.branchId, answered, "answered by the items written", ONCE_ANSWERED);
  yield* refuseCallsRunElsewhere(tx, at.branchId, answered, opens, made, RAN_ELSEWHERE);
  const written = yield* writeMessages(ctx, tx, session, at.branchId, at.head, fields);
  yield* recordRequest(ctx, tx, session.id, request, lastOf(written.messages));
  return written;
}

/**
 * True when the current lineage still holds what the run was served and the tool calls it names that were journaled
 * after that on its branch: the session moved on from there (another writer's pop of a later item, a fork after the
 * run's calls), not back before them, so the run's items continue the current branch.
 */
function* continues(tx: Tx, session: SessionRow, current: BranchRow, served: Served, calls: readonly string[]): Step<boolean> {
  let from = 0;
  if (served.lastMessageId !== null) {
    const { message } = yield* sessionMessage(tx, session, served.lastMessageId);
    if ((yield* entryAt(tx, current, message.position))?.id !== message.id) return false;
    from = message.position;
  }
  if (calls.length === 0) return true;
  const wanted = new Set(calls);
  for (const segment of yield* tx.lineage(served.branchId)) {
    if (segment.upTo <= from) continue;
    for (const entry of yield* tx.segmentEntries({ ...segment, after: Math.max(segment.after, from) })) {
      if (entry.callId === null || !wanted.has(entry.callId)) continue;
      if ((yield* entryAt(tx, current, entry.position))?.id !== entry.id) return false;
    }
  }
  return true;
}

function* movedLanding(tx: Tx, session: SessionRow, currentId: string, served: Served, calls: readonly string[]): Step<Landing> {
  const branch = yield* branchOf(tx, session, served.branchId);
  const runs = { branch, head: yield* headOf(tx, branch) };
  if (served.lastMessageId === null) {
    // Served an empty conversation: its branch while that has no message yet, else a fork at the start.
    if (!(yield* lastLineageMessage(tx, branch.id))) return { branchId: branch.id, head: runs.head };
    return yield* forkRightAfter(tx, session, branch, undefined);
  }
  const at = yield* findLanding(tx, session, runs, served.lastMessageId, calls);
  if (at.branchId !== currentId) return at;
  // Another branch ending at that item, which is the current one (the rollback's): a version of its own instead.
  return yield* forkRightAfter(tx, session, branch, (yield* sessionMessage(tx, session, served.lastMessageId)).message);
}
