// forkAfter: a new branch forked right after a message (or at the session's start), made current; the world follows.
// What the adapters' non-destructive pops and clears are (a rollback to a position no checkpoint marks): what came
// after that message (later messages, tool calls, state changes) stays on the old branch and its effects are undone.
import type { BaseMoveSpec } from "./moves/move-spec.js";
import type { MoveOptions } from "../models/inputs.js";
import type { MoveResult } from "../models/types.js";
import type { SessionRow, Step, Tx } from "../store/port/index.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { sessionMessage } from "./core/owned.js";
import { forkedBranch } from "./log/forked-branch.js";
import { performMove } from "./moves/move.js";

/** Forks right after `messageId` (on that message's lineage), or at position 0 of the current branch when null. */
export async function forkAfter(ctx: EngineContext, ref: SessionRef, messageId: string | null, options?: MoveOptions): Promise<MoveResult> {
  return performMove(ctx, ref, "rollback", options, (tx, session) => forkSpec(tx, session, messageId));
}

/** The move `forkAfter` makes, read in the move's transaction. */
export function* forkSpec(tx: Tx, session: SessionRow, messageId: string | null): Step<BaseMoveSpec> {
  let branch = (yield* tx.getBranch(session.currentBranchId))!;
  let forkPosition = 0;
  let forkEntryId: string | null = null;
  if (messageId !== null) {
    const found = yield* sessionMessage(tx, session, messageId);
    branch = found.branch;
    forkPosition = found.message.position;
    forkEntryId = found.message.id;
  }
  return {
    kind: "rollback",
    sessionId: session.id,
    userId: session.userId,
    target: { branchId: branch.id, position: forkPosition },
    newBranch: forkedBranch(session.id, { parentId: branch.id, position: forkPosition, entryId: forkEntryId }),
    edit: null,
  };
}
