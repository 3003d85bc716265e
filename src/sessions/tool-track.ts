// toolTrack: the tool invocations of a branch's lineage, with their completion and whether they are applied.
import type { Tx } from "../store/port/index.js";
import { historyInput, parseOptions } from "../models/inputs.js";
import type { ToolInvocation } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession } from "./core/owned.js";
import { toToolInvocation } from "./core/rows.js";
import { branchOf, lineageTools } from "./log/lineage.js";

export async function toolTrack(ctx: EngineContext, ref: SessionRef, options: { branchId?: string } = {}): Promise<ToolInvocation[]> {
  const o = parseOptions(historyInput, options, "options");
  return ctx.store.read((tx) => toolTrackUnit(tx, ref, o.branchId));
}

function* toolTrackUnit(tx: Tx, ref: SessionRef, branchId: string | undefined) {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  const branch = yield* branchOf(tx, session, branchId ?? session.currentBranchId);
  return (yield* lineageTools(tx, branch.id)).map(toToolInvocation);
}
