// edit: a new version of a message — a branch forked just before it, with the new message appended.
import type { BaseMoveSpec, WithinMove } from "./moves/move-spec.js";
import { newId } from "../models/ids.js";
import type { MoveOptions } from "../models/inputs.js";
import type { EditResult, MessageInput } from "../models/types.js";
import type { SessionRow, Step, Tx } from "../store/port/index.js";
import { messageFields } from "./append.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { sessionMessage } from "./core/owned.js";
import { entryAt, headOfEntry } from "./log/lineage.js";
import type { EntryFields } from "./log/writer.js";
import { forkedBranch } from "./moves/forked-branch.js";
import { performMove } from "./moves/move.js";

export async function edit(
  ctx: EngineContext,
  ref: SessionRef,
  messageId: string,
  next: MessageInput,
  options?: MoveOptions,
  within?: WithinMove,
): Promise<EditResult> {
  const fields = messageFields(ctx, next, "message");
  const outcome = await performMove(ctx, ref, "edit", options, (tx, session) => editSpec(ctx, tx, session, messageId, fields), within);
  // An edit's outcome always carries its message (finishMoveTx writes it).
  return outcome as EditResult;
}

/** An edit's move (its message already validated), read in the move's transaction. */
function* editSpec(ctx: EngineContext, tx: Tx, session: SessionRow, messageId: string, fields: EntryFields): Step<BaseMoveSpec> {
  const { message: original, branch, base } = yield* sessionMessage(tx, session, messageId);
  const forkPosition = original.position - 1;
  const forkEntry = base ?? (yield* entryAt(tx, branch, forkPosition));
  return {
    kind: "edit",
    sessionId: session.id,
    userId: session.userId,
    target: { branchId: branch.id, position: forkPosition },
    newBranch: forkedBranch(session.id, { parentId: branch.id, position: forkPosition, entryId: forkEntry?.id ?? null }),
    edit: { id: newId("msg"), fields, base: headOfEntry(forkEntry) },
  };
}
