// replaceTail: the current lineage's last messages replaced by others, read and written in one step. Without a fork
// (the replacement starts with every message it replaces) it is an append; otherwise a move, as `forkAfter` makes one:
// a branch forked right after the message before the first one replaced, the new messages appended there, the world
// following. What the agent adapters' pops and history transactions are: the messages they check are read in the
// transaction that forks, so a message appended meanwhile by another handle, process or server is never lost.
import type { MoveOptions } from "../models/inputs.js";
import type { Checkpoint, Message, MoveResult } from "../models/types.js";
import type { MessageRow, SessionRow, Step, Tx } from "../store/port/index.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { toMessage } from "./core/rows.js";
import { headOfEntry } from "./core/head.js";
import { writeMessages, type EntryFields } from "./log/writer.js";
import { forkSpec } from "./fork-after.js";
import { assertCausedCallsPassable } from "./edit-point.js";
import { performMove } from "./moves/move.js";
import type { BaseMoveSpec, MoveOutcome } from "./moves/move-spec.js";
import { applyOnce, recordRequest, requestOf, type AnswerCodec } from "./requests/ledger.js";
import { afterMoves, currentToWrite } from "./writes/after-moves.js";

export interface TailReplacement {
  /** How many of the current lineage's last messages are replaced. */
  count: number;
  /** Of those, how many the replacement starts with (they stay where they are); default 0. */
  keep?: number;
  /** The messages that follow those kept (validated entry fields), in order. */
  messages: EntryFields[];
  /**
   * Called in the write transaction with the messages to replace, oldest first (fewer than `count` when the lineage
   * has fewer): throw to refuse (nothing is written), return false to leave everything as it is.
   */
  check?: (tail: Message[]) => boolean | void;
}

export interface TailReplaced {
  /** The messages the replacement took off the current lineage (those kept excluded). */
  replaced: Message[];
  /** The messages it wrote. */
  messages: Message[];
  /** The move it made (null when it only appended). */
  move: MoveResult | null;
}

/** A request's answer when the caller needs none back: a retry answers null. */
const NO_ANSWER: AnswerCodec<TailReplaced | null> = {
  encode: () => "null",
  *decode() {
    return null;
  },
};

/** Thrown out of a move's planning unit to write nothing: `check` declined. */
class Declined extends Error {}

/**
 * Replaces the tail of the current lineage (see `TailReplacement`). Null when `check` declined, or when `request` was
 * applied by an earlier call (nothing written either way). `moveOptions` apply to the move, when there is one.
 */
export async function replaceTail(
  ctx: EngineContext,
  ref: SessionRef,
  r: TailReplacement,
  options: { moveOptions?: MoveOptions; request?: { id: string; verb: string; args: unknown } } = {},
): Promise<TailReplaced | null> {
  const request = options.request && requestOf(options.request.id, options.request.verb, options.request.args, NO_ANSWER);
  const keep = r.keep ?? 0;
  return applyOnce(ctx, ref, request, async () => {
    if (keep >= r.count) {
      const out = await afterMoves(ctx, ref, () =>
        ctx.store.write({ sessionId: ref.id }, (tx) => appendTailUnit(tx, ctx, ref, r, request)),
      );
      if (!out) return null;
      for (const cp of out.checkpoints) ctx.events.emit("checkpoint", cp);
      return out.done;
    }
    // Set by the move's planning unit (run again from its start when a store retries it), read by its finishing unit.
    const state: ForkState = { ctx, ref, r, keep, request, planned: undefined, done: undefined, auto: [] };
    const prepare = (tx: Tx, session: SessionRow) => prepareFork(tx, session, state);
    const within = (tx: Tx, outcome: MoveOutcome) => writeAfterFork(tx, outcome, state);
    try {
      await performMove(ctx, ref, "rollback", options.moveOptions, prepare, within);
    } catch (error) {
      if (error instanceof Declined) return null;
      throw error;
    }
    for (const cp of state.auto) ctx.events.emit("checkpoint", cp);
    return state.done!;
  });
}

/** What a tail replacement's move units share: its inputs, and what the planning unit found for the finishing one. */
interface ForkState {
  ctx: EngineContext;
  ref: SessionRef;
  r: TailReplacement;
  keep: number;
  request: ReturnType<typeof requestOf> | undefined;
  planned: { branchId: string; head: number; forkEntryId: string | null; replaced: Message[] } | undefined;
  done: TailReplaced | undefined;
  auto: Checkpoint[];
}

/** The replacement keeps the whole tail: its messages are appended on the current branch, no move. */
function* appendTailUnit(
  tx: Tx,
  ctx: EngineContext,
  ref: SessionRef,
  r: TailReplacement,
  request: ReturnType<typeof requestOf> | undefined,
) {
  const { session, branch, head } = yield* currentToWrite(ctx, tx, ref.id, ref.userId);
  if (r.check) {
    const tail = (yield* lastMessages(tx, branch.id, r.count)).map(toMessage);
    if (r.check(tail) === false) return null;
  }
  const written = yield* writeMessages(ctx, tx, session, branch.id, head, r.messages);
  const done: TailReplaced = { replaced: [], messages: written.messages, move: null };
  yield* recordRequest(ctx, tx, session.id, request, done);
  return { done, checkpoints: written.checkpoints };
}

/** The move's planning unit: checks the tail and forks right after the last message kept. */
function* prepareFork(tx: Tx, session: SessionRow, state: ForkState): Step<BaseMoveSpec> {
  const { r, keep } = state;
  const rows = yield* lastMessages(tx, session.currentBranchId, r.count + 1);
  const tail = rows.slice(Math.max(0, rows.length - r.count)).map(toMessage);
  if (r.check?.(tail) === false || tail.length <= keep) throw new Declined();
  const after = keep > 0 ? tail[keep - 1]! : rows.length > r.count ? toMessage(rows[0]!) : null;
  // A run's input taken off, its calls journaled before another writer's message: refused, as its edit is.
  yield* assertCausedCallsPassable(tx, session.currentBranchId, rows[rows.length - tail.length + keep]!);
  const spec = yield* forkSpec(tx, session, after?.id ?? null);
  state.planned = {
    branchId: session.currentBranchId,
    head: (yield* tx.headPosition(session.currentBranchId))!,
    forkEntryId: spec.newBranch!.forkEntryId,
    replaced: tail.slice(keep),
  };
  return spec;
}

/** The move's finishing unit: the replacement, then what was appended to the old branch meanwhile, on the new one. */
function* writeAfterFork(tx: Tx, outcome: MoveOutcome, state: ForkState): Step<void> {
  const { ctx, ref, r, request } = state;
  const p = state.planned!;
  const base = headOfEntry(p.forkEntryId === null ? undefined : yield* tx.getEntry(p.forkEntryId));
  const written = yield* writeMessages(ctx, tx, ref, outcome.branch.id, base, [
    ...r.messages,
    ...(yield* appendedSince(tx, p.branchId, p.head)),
  ]);
  state.auto = written.checkpoints;
  // The move's outcome (what its event carries too) ends at the messages written after the fork.
  outcome.branch.head = written.head.position;
  state.done = { replaced: p.replaced, messages: written.messages, move: outcome };
  yield* recordRequest(ctx, tx, ref.id, request, state.done);
}

/** The last `count` messages of a branch's lineage, oldest first (fewer when it has fewer). */
function* lastMessages(tx: Tx, branchId: string, count: number): Step<MessageRow[]> {
  if (count === 0) return [];
  const segments = yield* tx.lineage(branchId);
  let out: MessageRow[] = [];
  for (let i = segments.length - 1; i >= 0 && out.length < count; i--) {
    out = [...(yield* tx.lastSegmentMessages(segments[i]!, count - out.length)), ...out];
  }
  return out;
}

/**
 * Messages appended to the branch a move leaves after `head` (the head its planning read): written by another writer
 * while the move's tools were undone, they go on after the replacement instead of staying behind on the old branch.
 * In a move that ran no tool (one transaction) there are none.
 */
function* appendedSince(tx: Tx, branchId: string, head: number): Step<EntryFields[]> {
  const now = (yield* tx.headPosition(branchId))!;
  if (now <= head) return [];
  const rows = yield* tx.segmentEntries({ branchId, after: head, upTo: now });
  return rows
    .filter((e) => e.kind === "message")
    .map((e) => ({ kind: "message", role: e.role, content: e.content, clientId: e.clientId, metadata: e.metadata }));
}
