// forkAfter: a new branch forked right after a message (or at the session's start), made current; the world follows.
// What the adapters' non-destructive pops and clears are (a rollback to a position no checkpoint marks): what came
// after that message (later messages, tool calls, state changes) stays on the old branch and its effects are undone.
import { newId } from "../models/ids.js";
import type { MoveOptions } from "../models/inputs.js";
import type { MoveResult } from "../models/types.js";
import type { SessionRow } from "../store/store.js";
import type { EngineContext, SessionRef } from "./context.js";
import { performMove, type BaseMoveSpec } from "./move.js";
import { sessionMessage } from "./ownership.js";

/** Forks right after `messageId` (on that message's lineage), or at position 0 of the current branch when null. */
export async function forkAfter(ctx: EngineContext, ref: SessionRef, messageId: string | null, options?: MoveOptions): Promise<MoveResult> {
  return performMove(ctx, ref, "rollback", options, (session) => forkSpec(ctx, session, messageId));
}

function forkSpec(ctx: EngineContext, session: SessionRow, messageId: string | null): BaseMoveSpec {
  let branch = ctx.store.getBranch(session.currentBranchId)!;
  let forkPosition = 0;
  let forkEntryId: string | null = null;
  if (messageId !== null) {
    const found = sessionMessage(ctx.store, session, messageId);
    branch = found.branch;
    forkPosition = found.message.position;
    forkEntryId = found.message.id;
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
      forkEntryId,
      name: null,
      // Forked at no checkpoint, as an edit's branch is (an edit that removes instead of replacing): exports and
      // imports tell a rollback's branch by the checkpoint it forks at.
      reason: "edit",
      createdAt: 0,
    },
    edit: null,
  };
}
