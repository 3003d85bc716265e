// branches: the session's internal sessions, as a flat list (branch-tree.ts nests them).
import type { Tx } from "../store/port/index.js";
import type { Branch } from "../models/types.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedSession } from "./core/owned.js";
import { toBranch } from "./core/rows.js";

export async function listBranches(ctx: EngineContext, ref: SessionRef): Promise<Branch[]> {
  return ctx.store.read((tx) => listBranchesUnit(tx, ref));
}

function* listBranchesUnit(tx: Tx, ref: SessionRef) {
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  const heads = yield* tx.branchHeads(session.id);
  return (yield* tx.listBranches(session.id)).map((b) =>
    toBranch(b, Math.max(heads.get(b.id) ?? 0, b.forkPosition), session.currentBranchId),
  );
}
