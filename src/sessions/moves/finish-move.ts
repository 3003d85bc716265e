// Finishing a move: the new branch (and edited message), the target made current, the journal closed, in one transaction.
import type { Branch, FailedStep, Message, MoveResult, ToolInvocation } from "../../models/types.js";
import type { Step, Tx } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { toBranch, toMessage, toToolInvocation } from "../core/rows.js";
import { headOfEntry } from "../core/head.js";
import { autoCheckpointAfterMessage, writeEntry } from "../log/writer.js";
import { branchMove, insertSwitchEvent, moveEvent, recordInHistory } from "./history.js";
import { continueFailedBlock } from "./continued.js";
import { noteBlockBranch } from "../core/block-scope.js";
import { noteStackChange, stackBeforeMove, takeBackBlockMoves } from "./block-history.js";
import { fenced } from "./fence.js";
import type { MoveOutcome, MoveSpec, WithinMove } from "./move-spec.js";
import { moveAnswer } from "./move-answer.js";
import { recordRequest } from "../requests/ledger.js";

/** What the journal says a move did; runs inside a unit of work. */
export function* journalReport(
  ctx: EngineContext,
  tx: Tx,
  moveId: string | null,
): Step<Pick<MoveResult, "undone" | "replayed" | "failed" | "unknown">> {
  const out = {
    undone: [] as ToolInvocation[],
    replayed: [] as ToolInvocation[],
    failed: [] as FailedStep[],
    unknown: [] as ToolInvocation[],
  };
  if (moveId === null) return out;
  for (const step of yield* tx.moveSteps(moveId)) {
    const invocation = toToolInvocation((yield* tx.getTool(step.entryId))!);
    if (step.status === "done") (step.op === "undo" ? out.undone : out.replayed).push(invocation);
    else if (step.status === "failed")
      out.failed.push({ invocation, step: step.op, error: (JSON.parse(step.error ?? "{}") as { message?: string }).message ?? "failed" });
    else if (step.status === "unknown") out.unknown.push(invocation);
  }
  return out;
}

/** Creates the new branch (and edited message), makes the target current, closes the journal: one transaction. */
export async function finishMove(ctx: EngineContext, spec: MoveSpec, moveId: string | null, within?: WithinMove): Promise<MoveOutcome> {
  let outcome: MoveOutcome;
  try {
    outcome = await ctx.store.write({ sessionId: spec.sessionId }, (tx) => finishMoveTx(ctx, tx, spec, moveId, within));
  } catch (error) {
    if (!within) throw error;
    // What the caller wanted written with the move was refused; the move's tools have run, so the move itself still
    // finishes (its journal closed, the session on its target), and then the caller hears why its part was not.
    ctx.events.emit(moveEvent(spec), await ctx.store.write({ sessionId: spec.sessionId }, (tx) => finishMoveTx(ctx, tx, spec, moveId)));
    throw error;
  }
  ctx.events.emit(moveEvent(spec), outcome);
  return outcome;
}

/** The body of `finishMove`, inside the caller's write transaction. */
export function* finishMoveTx(ctx: EngineContext, tx: Tx, spec: MoveSpec, moveId: string | null, within?: WithinMove): Step<MoveOutcome> {
  // Fenced like every journal update: a move another owner took over (this one stalled past its lease) is theirs to finish.
  if (moveId) fenced(yield* tx.renewMove(moveId, ctx.ownership.self, ctx.ownership.leaseMs ?? 0));
  const now = ctx.now();
  const stack = yield* stackBeforeMove(ctx, tx, spec.sessionId);
  let branchRow = spec.newBranch ?? (yield* tx.getBranch(spec.target.branchId))!;
  let message: Message | undefined;
  // A new branch's head is its fork position (or the edited message); an existing one's is looked up.
  let head = spec.newBranch ? spec.newBranch.forkPosition : spec.target.position;
  if (spec.newBranch) {
    branchRow = spec.newBranch;
    branchRow.createdAt = now;
    yield* tx.insertBranch(branchRow, branchMove(spec));
    // A fork entering a failed block's branch as it was is that branch's conversation, not one the block made.
    noteBlockBranch(ctx.events, branchRow.id, spec.continues ? branchRow.forkPosition : undefined);
    // A failed block's branch entered as before the block: a later move to it lands on this fork again.
    if (spec.continues) {
      const c = spec.continues;
      yield* tx.continueBranch(c.branchId, branchRow.id, c.atPosition, c.fromPosition);
    }
    if (spec.unrecorded) {
      yield* continueFailedBlock(tx, branchRow, spec.blockBranches, spec.blockStarts);
      // The block's own requests were not applied: it is as if it never ran.
      if (spec.blockRequests) yield* tx.forgetRequests(spec.sessionId, spec.blockRequests);
    }
    if (spec.edit) {
      let base = spec.edit.base ?? headOfEntry(branchRow.forkEntryId ? yield* tx.getEntry(branchRow.forkEntryId) : undefined);
      // The messages written with the edited one before it, again (see `editPoint`), each as an append writes it.
      for (const fields of spec.edit.carried ?? []) {
        const carried = yield* writeEntry(ctx, tx, branchRow.id, base, fields);
        yield* autoCheckpointAfterMessage(ctx, tx, { id: spec.sessionId, userId: spec.userId }, carried);
        base = headOfEntry(carried);
      }
      const row = yield* writeEntry(ctx, tx, branchRow.id, base, spec.edit.fields, spec.edit.id);
      message = toMessage(row);
      head = row.position;
      yield* autoCheckpointAfterMessage(ctx, tx, { id: spec.sessionId, userId: spec.userId }, row);
    }
  } else if (!spec.history) {
    // Undo and redo record their own event.
    yield* insertSwitchEvent(tx, spec.sessionId, branchRow.id, now);
  }
  // A block's own move keeps the undone moves' rows: its failure takes the move back, and they are to redo again.
  const keepUndone = stack !== undefined;
  const top = yield* recordInHistory(tx, spec, { branchId: branchRow.id, position: head }, now, keepUndone, moveId !== null);
  yield* tx.setCurrentBranch(spec.sessionId, branchRow.id, now, top, keepUndone);
  if (spec.unrecorded) yield* takeBackBlockMoves(tx, spec.sessionId, spec.blockMoves);
  yield* noteStackChange(ctx, tx, spec.sessionId, stack);
  if (moveId) yield* tx.finishMove(moveId, "done", now);
  const report = yield* journalReport(ctx, tx, moveId);
  const byIds = (ids: readonly string[]) => invocationsByIds(ids, tx);
  const branch: Branch = toBranch(branchRow, head, branchRow.id);
  const outcome: MoveOutcome = {
    branch,
    undone: report.undone,
    replayed: report.replayed,
    skipped: yield* byIds(spec.skipped),
    unregistered: yield* byIds(spec.unregistered ?? []),
    failed: report.failed,
    unknown: [...(yield* byIds(spec.unknown)), ...report.unknown],
    ...(message ? { message } : {}),
  };
  if (within) yield* within(tx, outcome);
  yield* recordMoveRequest(ctx, tx, spec, outcome);
  return outcome;
}

/** Records the request a move was made with (if any) and its answer, in the transaction that finishes the move. */
export function* recordMoveRequest(ctx: EngineContext, tx: Tx, spec: MoveSpec, outcome: MoveOutcome): Step<void> {
  if (!spec.request) return;
  const { id, fingerprint, extra } = spec.request;
  yield* recordRequest(ctx, tx, spec.sessionId, { id, fingerprint, answer: moveAnswer }, extra ? { ...outcome, ...extra } : outcome);
}

function* invocationsByIds(ids: readonly string[], tx: Tx): Step<ToolInvocation[]> {
  const out: ToolInvocation[] = [];
  for (const id of ids) out.push(toToolInvocation((yield* tx.getTool(id))!));
  return out;
}
