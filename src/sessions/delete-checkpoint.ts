// deleteCheckpoint: removes a checkpoint no branch forks from and no guarded block holds.
import type { Tx } from "../store/port/index.js";
import { ConflictError } from "../models/errors.js";
import type { WriteOptions } from "../models/inputs.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { checkIfAt, type IfAt } from "./core/if-at.js";
import { ownedSession, sessionCheckpoint } from "./core/owned.js";
import { applyOnce, recordRequest, requestOf, writeControlOf, type AnswerCodec, type Request } from "./requests/ledger.js";

/** A deletion answers nothing: a retry (the checkpoint gone meanwhile) answers nothing too. */
const NOTHING: AnswerCodec<void> = { encode: () => "null", *decode() {} };

export async function deleteCheckpoint(ctx: EngineContext, ref: SessionRef, checkpointId: string, options?: WriteOptions): Promise<void> {
  const { requestId, ifAt } = writeControlOf(options);
  const request = requestOf(requestId, "deleteCheckpoint", checkpointId, NOTHING);
  await applyOnce(ctx, ref, request, () =>
    ctx.store.write({ sessionId: ref.id }, (tx) => deleteCheckpointUnit(tx, ref, checkpointId, ctx, request, ifAt)),
  );
}

function* deleteCheckpointUnit(
  tx: Tx,
  ref: SessionRef,
  checkpointId: string,
  ctx: EngineContext,
  request: Request<void> | undefined,
  ifAt: IfAt | undefined,
) {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  yield* checkIfAt(tx, session, ifAt);
  const cp = yield* sessionCheckpoint(tx, session, checkpointId, ctx.now());
  // A journaled rollback to it (still undoing tools, maybe in another process) creates its branch only at the end.
  if ((yield* tx.countBranchesForkedFrom(cp.id)) > 0 || (yield* tx.isMovingFrom(cp.id))) {
    throw new ConflictError(
      `checkpoint ${cp.id} is where a branch forks from (or a running rollback goes to); it cannot be deleted`,
      "CHECKPOINT_IN_USE",
    );
  }
  if (yield* tx.langgraph.usesFpCheckpoint(cp.id)) {
    throw new ConflictError(
      `checkpoint ${cp.id} holds a LangGraph checkpoint of ForkpointSaver; delete the thread instead`,
      "CHECKPOINT_IN_USE",
    );
  }
  // Left to find: a guarded block's hold (atomic), whose rollback goes to it, in whichever handle or server it runs.
  if (yield* tx.checkpointInUse(session.id, cp.id)) {
    throw new ConflictError(
      `checkpoint ${cp.id} is held by a guarded block (atomic) that is running; it cannot be deleted`,
      "CHECKPOINT_IN_USE",
    );
  }
  yield* tx.deleteCheckpoint(cp.id);
  yield* tx.insertEvent({
    sessionId: session.id,
    kind: "checkpoint-deleted",
    refId: cp.id,
    branchId: cp.branchId,
    detail: cp.name,
    createdAt: ctx.now(),
  });
  yield* recordRequest(ctx, tx, session.id, request, undefined, true);
}
