// A failed guarded block's branch, continued by its rollback's branch: a move to its head lands where the block never ran.
import type { BranchRow, Step, Tx } from "../../store/port/index.js";
import { headOf } from "../core/head.js";

/** Continuations followed at most (each a failed block's; the chain cannot loop, this bounds a damaged database). */
const MAX_HOPS = 64;

/**
 * Where a move to `branch`'s head lands: while the head is where a failed guarded block (atomic) left it (nobody wrote
 * on the branch since), at the head of the branch its rollback made, followed on (that one's block may have failed too).
 */
export function* landingBranch(tx: Tx, branch: BranchRow): Step<BranchRow> {
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const next = yield* tx.branchContinuation(branch.id);
    if (!next || (yield* headOf(tx, branch)).position !== next.atPosition) return branch;
    const by = yield* tx.getBranch(next.byBranchId);
    if (!by) return branch;
    branch = by;
  }
  return branch;
}

/**
 * Run in the transaction of a failed guarded block's rollback, which made `rolledBack` at the block's checkpoint: the
 * branch the block ran on, when the block wrote on it, is continued by `rolledBack` while its head stays where it is.
 */
export function* continueFailedBlock(tx: Tx, rolledBack: BranchRow): Step<void> {
  if (!rolledBack.parentId) return;
  const ran = yield* tx.getBranch(rolledBack.parentId);
  if (!ran) return;
  const head = yield* headOf(tx, ran);
  if (head.position > rolledBack.forkPosition) yield* tx.continueBranch(ran.id, rolledBack.id, head.position);
}
