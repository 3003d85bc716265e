// deleteCheckpoint: removes a checkpoint no branch forks from.
import type { Tx } from "../store/port/index.js";
import { ConflictError } from "../models/errors.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession, sessionCheckpoint } from "./core/owned.js";

export async function deleteCheckpoint(ctx: EngineContext, ref: SessionRef, checkpointId: string): Promise<void> {
  await ctx.store.write({ sessionId: ref.id }, (tx) => deleteCheckpointUnit(tx, ref, checkpointId, ctx));
}

function* deleteCheckpointUnit(tx: Tx, ref: SessionRef, checkpointId: string, ctx: EngineContext) {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
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
  yield* tx.deleteCheckpoint(cp.id);
  yield* tx.insertEvent({
    sessionId: session.id,
    kind: "checkpoint-deleted",
    refId: cp.id,
    branchId: cp.branchId,
    detail: cp.name,
    createdAt: ctx.now(),
  });
}
