// history and toolTrack: a branch's lineage read in one walk over its ancestry.
import { historyInput, parseInput } from "../models/inputs.js";
import type { Message, ToolInvocation } from "../models/types.js";
import type { EngineContext, SessionRef } from "./context.js";
import { branchOf, lineageMessages, lineageTools } from "./lineage.js";
import { ownedSession } from "./ownership.js";
import { toMessage, toToolInvocation } from "./rows.js";

export async function history(ctx: EngineContext, ref: SessionRef, options: { branchId?: string } = {}): Promise<Message[]> {
  const o = parseInput(historyInput, options, "history");
  return ctx.store.read(function* (tx) {
    const session = yield* ownedSession(tx, ref.id, ref.userId);
    const branch = yield* branchOf(tx, session, o.branchId ?? session.currentBranchId);
    return yield* lineageMessages(tx, branch.id, toMessage);
  });
}

export async function toolTrack(ctx: EngineContext, ref: SessionRef, options: { branchId?: string } = {}): Promise<ToolInvocation[]> {
  const o = parseInput(historyInput, options, "toolTrack");
  return ctx.store.read(function* (tx) {
    const session = yield* ownedSession(tx, ref.id, ref.userId);
    const branch = yield* branchOf(tx, session, o.branchId ?? session.currentBranchId);
    return (yield* lineageTools(tx, branch.id)).map(toToolInvocation);
  });
}
