// forkBefore: a new branch forked just before a message (or at the session's start), made current; the world follows.
// What the adapters' non-destructive pops and clears are (a rollback to a position no checkpoint marks).
import { newId } from "../models/ids.js";
import type { MoveOptions } from "../models/inputs.js";
import type { MoveResult } from "../models/types.js";
import type { SessionRow } from "../store/store.js";
import type { EngineContext, SessionRef } from "./context.js";
import { entryAt } from "./lineage.js";
import { performMove, type BaseMoveSpec } from "./move.js";
import { sessionMessage } from "./ownership.js";

/** Forks before `messageId` (on that message's lineage), or at position 0 of the current branch when null. */
export async function forkBefore(ctx: EngineContext, ref: SessionRef, messageId: string | null, options?: MoveOptions): Promise<MoveResult> {
  return performMove(ctx, ref, "rollback", options, (session) => forkSpec(ctx, session, messageId));
}

function forkSpec(ctx: EngineContext, session: SessionRow, messageId: string | null): BaseMoveSpec {
  let branch = ctx.store.getBranch(session.currentBranchId)!;
  let forkPosition = 0;
  let forkEntry: { id: string } | undefined;
  if (messageId !== null) {
    const found = sessionMessage(ctx.store, session, messageId);
    branch = found.branch;
    forkPosition = found.message.position - 1;
    forkEntry = found.base ?? entryAt(ctx.store, branch, forkPosition);
  }
  return {
    kind: "rollback",
    sessionId: session.id,
    userId: session.userId,
    target: { branchId: branch.id, position: forkPosition },
    newBranch: {
      id: newId("br"),
      sessionId: session.id,
      parentId: branch.id,
      forkCheckpointId: null,
      forkPosition,
      forkEntryId: forkEntry?.id ?? null,
      name: null,
      reason: "rollback",
      createdAt: 0,
    },
    edit: null,
  };
}
