// Moves that leave the conversation where it is: a files-only move, and a move that finds the session at its target.
import type { ToolInvocation } from "../../models/types.js";
import type { SessionRow, Step, Tx } from "../../store/port/index.js";
import type { EngineContext, SessionRef } from "../core/context.js";
import { ownedCurrent } from "../core/owned.js";
import { toBranch } from "../core/rows.js";
import { headOf } from "../core/head.js";
import { recordRequest, type Request } from "../requests/ledger.js";
import type { MoveOutcome } from "./move-spec.js";

/** A staying move's request (recorded once per id) and what its answer carries beyond the conversation's place. */
export interface StayWrite {
  request?: Request<MoveOutcome> | undefined;
  extra?: Pick<MoveOutcome, "files" | "savedDrift">;
}

/** A files-only move: the conversation stays where it is (a request is recorded, with the files restored). */
export async function stayingPut(ctx: EngineContext, ref: SessionRef, w: StayWrite = {}): Promise<MoveOutcome> {
  if (!w.request) return ctx.store.read((tx) => stayingPutUnit(tx, ref));
  const request = w.request;
  return ctx.store.write({ sessionId: ref.id }, (tx) => stayingPutRecorded(ctx, tx, ref, request, w.extra));
}

function* stayingPutRecorded(
  ctx: EngineContext,
  tx: Tx,
  ref: SessionRef,
  request: Request<MoveOutcome>,
  extra: StayWrite["extra"],
): Step<MoveOutcome> {
  const outcome = yield* stayingPutUnit(tx, ref);
  yield* recordRequest(ctx, tx, ref.id, request, { ...outcome, ...extra });
  return outcome;
}

function* stayingPutUnit(tx: Tx, ref: SessionRef): Step<MoveOutcome> {
  const { branch, head } = yield* ownedCurrent(tx, ref.id, ref.userId);
  return {
    branch: toBranch(branch, head.position, branch.id),
    undone: [],
    replayed: [],
    skipped: [],
    unregistered: [],
    failed: [],
    unknown: [],
  };
}

/** The result of a move that finds the session already at its target: the current branch, nothing undone or replayed. */
export function* stayingHere(
  tx: Tx,
  session: SessionRow,
  plan: {
    readonly skipped: readonly ToolInvocation[];
    readonly unregistered: readonly ToolInvocation[];
    readonly unknown: readonly ToolInvocation[];
  },
): Step<MoveOutcome> {
  const branch = (yield* tx.getBranch(session.currentBranchId))!;
  return {
    branch: toBranch(branch, (yield* headOf(tx, branch)).position, branch.id),
    undone: [],
    replayed: [],
    skipped: [...plan.skipped],
    unregistered: [...plan.unregistered],
    failed: [],
    unknown: [...plan.unknown],
  };
}
