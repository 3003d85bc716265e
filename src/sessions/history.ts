// history: the messages of a branch's lineage, read in one walk over its ancestry.
import { historyInput, parseInput } from "../models/inputs.js";
import type { Message } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession } from "./core/owned.js";
import { toMessage } from "./core/rows.js";
import { branchOf, lineageMessages } from "./log/lineage.js";

export async function history(ctx: EngineContext, ref: SessionRef, options: { branchId?: string } = {}): Promise<Message[]> {
  const o = parseInput(historyInput, options, "history");
  return ctx.store.read(function* (tx) {
    const session = yield* ownedSession(tx, ref.id, ref.userId);
    const branch = yield* branchOf(tx, session, o.branchId ?? session.currentBranchId);
    return yield* lineageMessages(tx, branch.id, toMessage);
  });
}
