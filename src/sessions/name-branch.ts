// nameBranch: a label for a branch of the session (names need not be unique; null clears it).
import type { Tx } from "../store/port/index.js";
import { branchName, parseInput } from "../models/inputs.js";
import type { Branch } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession } from "./core/owned.js";
import { toBranch } from "./core/rows.js";
import { branchOf } from "./log/lineage.js";

export async function nameBranch(ctx: EngineContext, ref: SessionRef, branchId: string, name: string | null): Promise<Branch> {
  const label = parseInput(branchName, name, "name");
  return ctx.store.write({ sessionId: ref.id }, (tx) => nameBranchUnit(tx, ref, branchId, label));
}

function* nameBranchUnit(tx: Tx, ref: SessionRef, branchId: string, label: string | null) {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  const branch = yield* branchOf(tx, session, branchId);
  yield* tx.setBranchName(branchId, label);
  const head = (yield* tx.branchHeads(session.id)).get(branchId) ?? 0;
  return toBranch({ ...branch, name: label }, Math.max(head, branch.forkPosition), session.currentBranchId);
}
