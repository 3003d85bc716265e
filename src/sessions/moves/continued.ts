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
 * branch the block ran on, when written on since, and every other branch of the session the block's own writes and
 * moves landed on or made (`own`: not another opener's, see block-scope.ts) are continued by `rolledBack` while their
 * heads stay.
 */
export function* continueFailedBlock(tx: Tx, rolledBack: BranchRow, own?: ReadonlySet<string>): Step<void> {
  if (!rolledBack.parentId) return;
  yield* continueBlockBranches(tx, rolledBack, { branchId: rolledBack.parentId, position: rolledBack.forkPosition }, own);
}

/**
 * As `continueFailedBlock`, by the branch `by` where the session is: a failed block whose rollback found the session
 * at the block's checkpoint already (the block moved back there itself) and made no branch. `start`: the checkpoint.
 */
export function* continueBlockBranches(
  tx: Tx,
  by: BranchRow,
  start: { branchId: string; position: number },
  own?: ReadonlySet<string>,
): Step<void> {
  const ran = yield* tx.getBranch(start.branchId);
  if (!ran) return;
  if (ran.id !== by.id) {
    const head = yield* headOf(tx, ran);
    if (head.position > start.position) yield* tx.continueBranch(ran.id, by.id, head.position);
  }
  for (const id of own ?? []) {
    if (id === ran.id || id === by.id) continue;
    const written = yield* tx.getBranch(id);
    if (written?.sessionId === by.sessionId) yield* tx.continueBranch(id, by.id, (yield* headOf(tx, written)).position);
  }
}

/** Where a failed block's rollback forks instead of its checkpoint: the fork of the branch continuing an earlier one. */
export interface EarlierFork {
  position: number;
  entryId: string | null;
  checkpointId: string | null;
}

/**
 * A guarded block's checkpoint taken among another failed block's writes (two blocks ran at once on one branch, the
 * other began first and failed first): its rollback forks where that block's rollback did, before them, so that it
 * brings none of that block's writes back. Undefined when the checkpoint is not among such writes.
 */
export function* beforeFailedWrites(tx: Tx, branchId: string, position: number): Step<EarlierFork | undefined> {
  const next = yield* tx.branchContinuation(branchId);
  if (!next || position > next.atPosition) return undefined;
  const by = yield* tx.getBranch(next.byBranchId);
  if (!by || by.parentId !== branchId || position <= by.forkPosition) return undefined;
  return { position: by.forkPosition, entryId: by.forkEntryId, checkpointId: by.forkCheckpointId };
}
