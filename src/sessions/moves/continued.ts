// A failed guarded block's branch, continued by its rollback's branch: a move to its head lands where the block never ran.
import type { BranchRow, EntryRow, SessionRow, Step, Tx } from "../../store/port/index.js";
import type { BaseMoveSpec } from "./move-spec.js";
import { headOf } from "../core/head.js";
import { forkedBranch } from "../log/forked-branch.js";
import { entryAt, lastLineageMessage } from "../log/lineage.js";

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

/** A branch continued by the fork a move makes: its head then (`atPosition`), and the fork's position (`fromPosition`). */
export interface ContinuedByFork {
  branchId: string;
  atPosition: number;
  fromPosition: number;
}

/** Where a move lands: an existing branch, or `fork`, a branch the move makes that continues `continues`. */
export type Landing = { branch: BranchRow; continues?: undefined } | { branch: BranchRow; continues: ContinuedByFork };

/** A switch onto the fork a landing makes (see `landingOf`), as `switchBranch` and undo/redo make it. */
export function forkLandingSpec(session: SessionRow, branch: BranchRow, continues: ContinuedByFork): BaseMoveSpec {
  return {
    kind: "switch",
    sessionId: session.id,
    userId: session.userId,
    target: { branchId: continues.branchId, position: continues.fromPosition },
    newBranch: branch,
    edit: null,
    continues,
  };
}

/**
 * As `landingBranch`, with another branch than the one the block ran on, whose head before the block's first write
 * there is known and past its fork (its own entries then): entered as it was then, on a fork the move makes there (the rollback's branch is the conversation the
 * block ran in, not that one's). The move then continues the branch by that fork: a later move lands on it again.
 */
export function* landingOf(tx: Tx, branch: BranchRow): Step<Landing> {
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const next = yield* tx.branchContinuation(branch.id);
    if (!next || (yield* headOf(tx, branch)).position !== next.atPosition) return { branch };
    const by = yield* tx.getBranch(next.byBranchId);
    if (!by) return { branch };
    // A branch the block made (no start recorded: maybe the block's own edit) keeps the rollback's branch; one there
    // before the block is entered as it was, also with nothing of its own yet (a rollback's branch, where the session
    // was): its parent's entries up to its fork are its conversation.
    const from = next.fromPosition;
    if (from !== null && from >= branch.forkPosition && by.parentId !== branch.id && !(yield* forkedAmongWrites(tx, branch, by.id))) {
      const at = yield* entryAt(tx, branch, from);
      const fork = forkedBranch(branch.sessionId, { parentId: branch.id, position: from, entryId: at?.id ?? null });
      return { branch: fork, continues: { branchId: branch.id, atPosition: next.atPosition, fromPosition: from } };
    }
    branch = by;
  }
  return { branch };
}

/**
 * Whether `branch` forks among the writes of the failed block whose rollback made `by` (on the branch that block ran
 * on): made while the block ran (another opener's rollback there), it holds that block's writes before its fork, so
 * it was no conversation before the block to enter as it was.
 */
function* forkedAmongWrites(tx: Tx, branch: BranchRow, by: string): Step<boolean> {
  if (!branch.parentId) return false;
  const parent = yield* tx.branchContinuation(branch.parentId);
  return parent?.byBranchId === by && (yield* failedWritesAt(tx, branch.parentId, branch.forkPosition)) !== undefined;
}

/**
 * `branches` (each ending at `message`) as a write following that message finds them, as if failed guarded blocks never
 * ran: a branch whose head is where such a block left it, the block's writes after the message, is the branch
 * continuing it while that one's lineage ends at the message too, else none. A message such a block wrote itself is
 * followed where it is (the block's conversation, taken up again).
 */
export function* endingAsIfNeverRan(tx: Tx, branches: readonly BranchRow[], message: EntryRow): Step<readonly BranchRow[]> {
  if (yield* writtenByFailedBlock(tx, message)) return branches;
  const out: BranchRow[] = [];
  for (const branch of branches) {
    const landing = yield* landingBranch(tx, branch);
    if (landing.id !== branch.id && (yield* lastLineageMessage(tx, landing.id))?.id !== message.id) continue;
    if (!out.some((b) => b.id === landing.id)) out.push(landing);
  }
  return out;
}

/**
 * Whether `entry` is one a failed guarded block wrote on the branch it continues (as the stores' versions read it): on
 * the branch it ran on, after its rollback's fork; on another, after that branch's head when the block first wrote
 * there (unknown: after the rollback's fork entry), up to where the block left the head.
 */
function* writtenByFailedBlock(tx: Tx, entry: EntryRow): Step<boolean> {
  const next = yield* tx.branchContinuation(entry.branchId);
  if (!next || entry.position > next.atPosition) return false;
  const by = yield* tx.getBranch(next.byBranchId);
  if (!by) return false;
  if (by.parentId === entry.branchId) return entry.position > by.forkPosition;
  if (next.fromPosition !== null) return entry.position > next.fromPosition;
  return entry.seq > (by.forkEntryId ? ((yield* tx.getEntry(by.forkEntryId))?.seq ?? 0) : 0);
}

/**
 * Run in the transaction of a failed guarded block's rollback, which made `rolledBack` at the block's checkpoint: the
 * branch the block ran on, and every other branch of the session the block's own writes and
 * moves landed on or made (`own`: not another opener's, see block-scope.ts) are continued by `rolledBack` while their
 * heads stay; `starts`: each one's head before the block's first write there.
 */
export function* continueFailedBlock(
  tx: Tx,
  rolledBack: BranchRow,
  own?: readonly string[],
  starts?: Readonly<Record<string, number>>,
): Step<void> {
  if (!rolledBack.parentId) return;
  yield* continueBlockBranches(tx, rolledBack, { branchId: rolledBack.parentId, position: rolledBack.forkPosition }, own, starts);
}

/**
 * As `continueFailedBlock`, by the branch `by` where the session is: a failed block whose rollback found the session
 * at the block's checkpoint already (the block moved back there itself) and made no branch. `start`: the checkpoint.
 */
export function* continueBlockBranches(
  tx: Tx,
  by: BranchRow,
  start: { branchId: string; position: number },
  own?: readonly string[],
  starts?: Readonly<Record<string, number>>,
): Step<void> {
  const ran = yield* tx.getBranch(start.branchId);
  if (!ran) return;
  // Also when the block wrote nothing there (it moved away: an edit): the conversation goes on on `by`, so a move to
  // that branch's head (an earlier message's branch, as the versions picker names it) lands there too.
  if (ran.id !== by.id) yield* tx.continueBranch(ran.id, by.id, (yield* headOf(tx, ran)).position);
  // A spec stored by a version that wrote the set as `{}` names none.
  for (const id of Array.isArray(own) ? own : []) {
    if (id === ran.id || id === by.id) continue;
    const written = yield* tx.getBranch(id);
    if (written?.sessionId !== by.sessionId) continue;
    // Where the block's writes there begin: its head before the first (unknown for a branch it made and never wrote on).
    const from = starts && Object.hasOwn(starts, id) ? starts[id] : undefined;
    yield* tx.continueBranch(id, by.id, (yield* headOf(tx, written)).position, yield* failedWritesFrom(tx, id, from));
  }
}

/**
 * Where the failed writes on branch `id` begin, a block's first there being at `from`: before them, where an earlier
 * failed block's writes there, which this block's follow with nobody's between, begin (another opener's block, failed
 * while this one ran), so that the branch is entered as neither ran.
 */
function* failedWritesFrom(tx: Tx, id: string, from: number | undefined): Step<number | undefined> {
  if (from === undefined) return undefined;
  const earlier = yield* tx.branchContinuation(id);
  if (!earlier || earlier.atPosition < from) return from;
  if (earlier.fromPosition !== null) return Math.min(earlier.fromPosition, from);
  const by = yield* tx.getBranch(earlier.byBranchId);
  // Where the earlier block's writes there begin is not recorded (a branch it made): nor is where both blocks' do.
  return by?.parentId === id ? Math.min(by.forkPosition, from) : undefined;
}

/** Where a failed block's rollback forks instead of its checkpoint: the fork of the branch continuing an earlier one. */
export interface EarlierFork {
  branchId: string;
  position: number;
  entryId: string | null;
  checkpointId: string | null;
  /** When that rollback made its branch (the block failed then). */
  at: number;
}

/**
 * A guarded block's checkpoint taken among another failed block's writes (two blocks ran at once, the other began
 * first and failed first): its rollback forks where that block's rollback did, before them, so that it brings none of
 * that block's writes back. Those writes are on the branch the other block ran on, after its rollback's fork, or on
 * another branch it wrote on (the first one's rollback branch, where a third block failed before it), after that
 * branch's head when it first wrote there; or the checkpoint's branch forks among them (a third block's rollback made
 * it while the other ran), its lineage holding them. Undefined when the checkpoint is not among such writes.
 */
export function* beforeFailedWrites(tx: Tx, branchId: string, position: number, since: number): Step<EarlierFork | undefined> {
  let found: EarlierFork | undefined;
  // Where that block's rollback went may be among the writes of a block that failed after it: followed on.
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const next = yield* inLineage(tx, branchId, position, since);
    if (!next) return found;
    found = next;
    [branchId, position, since] = [next.branchId, next.position, next.at];
  }
  return found;
}

/**
 * As `beforeFailedWrites`, one block's: the first failed writes the lineage up to `position` on `branchId` holds. Those
 * on an ancestor count only for a block that failed after `since` (the checkpoint was taken while it ran): a lineage
 * entered or made once it had failed (a switch, a rollback to a checkpoint it took) holds its writes by choice.
 */
function* inLineage(tx: Tx, branchId: string, position: number, since: number): Step<EarlierFork | undefined> {
  let forkedAt: number | undefined;
  for (let hop = 0; hop < MAX_HOPS; hop++) {
    const found = yield* failedWritesAt(tx, branchId, position, forkedAt);
    if (found && (hop === 0 || found.at >= since)) return found;
    const branch = yield* tx.getBranch(branchId);
    if (!branch?.parentId) return undefined;
    // The lineage holds the parent's entries up to the fork, or up to `position` when that is before it.
    forkedAt = position >= branch.forkPosition ? branch.createdAt : undefined;
    [branchId, position] = [branch.parentId, Math.min(position, branch.forkPosition)];
  }
  return undefined;
}

/**
 * As `beforeFailedWrites`, for failed writes on branch `branchId` itself: after the rollback's fork on the branch the
 * block ran on, after the head the block first found on another, and where that is not recorded (a rollback that made
 * no branch, or one recorded before starts were) after the rollback's fork entry, as `writtenByFailedBlock` reads them.
 */
function* failedWritesAt(tx: Tx, branchId: string, position: number, forkedAt?: number): Step<EarlierFork | undefined> {
  const next = yield* tx.branchContinuation(branchId);
  if (!next || position > next.atPosition) return undefined;
  const by = yield* tx.getBranch(next.byBranchId);
  if (!by?.parentId) return undefined;
  if (by.parentId === branchId ? position <= by.forkPosition : next.fromPosition !== null && position <= next.fromPosition) {
    // A branch forked at the block's checkpoint while it ran (another opener's rollback there): what was written on it
    // after is what the block's rollback took back too.
    if (forkedAt === undefined || by.parentId !== branchId || position !== by.forkPosition || !by.forkCheckpointId) return undefined;
    const checkpoint = yield* tx.getCheckpoint(by.forkCheckpointId);
    if (!checkpoint || forkedAt <= checkpoint.createdAt) return undefined;
  }
  if (by.parentId !== branchId && next.fromPosition === null) {
    const branch = yield* tx.getBranch(branchId);
    const at = branch ? yield* entryAt(tx, branch, position) : undefined;
    const forkSeq = by.forkEntryId ? ((yield* tx.getEntry(by.forkEntryId))?.seq ?? 0) : 0;
    if (!at || at.seq <= forkSeq) return undefined;
  }
  const fork = { branchId: by.parentId, position: by.forkPosition, entryId: by.forkEntryId, checkpointId: by.forkCheckpointId };
  return { ...fork, at: by.createdAt };
}
