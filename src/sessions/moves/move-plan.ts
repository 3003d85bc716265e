// Works out a move from the database: the world's position, the target's lineage, and the steps between them.
import type { Entry, ToolInvocation } from "../../models/types.js";
import type { SessionRow, Step, ToolRow, Tx } from "../../store/port/index.js";
import { planSteps, type Handling, type StepPlan } from "../../tools/plan-steps.js";
import type { EngineContext } from "../core/context.js";
import { toEntry, toToolInvocation } from "../core/rows.js";
import { commonPrefix, lineageEntries, lineageTools } from "../log/lineage.js";
import { headOf } from "../core/head.js";
import { fileCalls, pathlessReach } from "../workspace/call-reach.js";
import { asideOnLineage, byApplication } from "../workspace/unapplied.js";

/** Where a move goes: a position on a branch's lineage. */
export interface MoveTarget {
  branchId: string;
  position: number;
}

/**
 * The snapshot a move with files restores: its position on the target lineage, the calls its files do not hold, and
 * the calls off its lineage that its files hold (applied when it was taken).
 */
export interface SnapshotAt {
  position: number;
  unapplied: ReadonlySet<string>;
  held: ReadonlySet<string>;
  /** The calls it holds as they were applied, when not in the order they were made (see `appliedOrder`). */
  order?: readonly string[];
  /** Among `unapplied`, those a files-only restore had taken out of the world (see `setAsideIn`): they stay out. */
  aside?: ReadonlySet<string>;
}

export interface ComputedPlan {
  steps: StepPlan<ToolInvocation>;
  /** Length of the lineage prefix the world and the target share. */
  common: number;
  worldBranchId: string;
  worldPosition: number;
  /**
   * A move with files whose snapshot is older than the point the world and the target share: the applied calls of that
   * shared part made after the snapshot that the move leaves applied (see `sharedAfter`). Its files step gives the
   * paths they changed what they left there (see `keptTarget`).
   */
  stays: string[];
}

/** A session without a workspace has no record of any call's reach. */
const NO_REACH: { outside: ReadonlySet<string>; idle: ReadonlySet<string> } = { outside: new Set(), idle: new Set() };

/**
 * Runs inside a read or write unit of work. `snapshotAt`: the move restores the workspace's files to the snapshot taken
 * at this position of the target lineage (see `planSteps`' `covered`); the calls its files do not hold are not covered,
 * so they are undone first when applied and replayed on top of the files, unless it holds a later call (`left`).
 */
export function* computePlan(
  ctx: EngineContext,
  tx: Tx,
  session: SessionRow,
  target: MoveTarget,
  snapshotAt?: SnapshotAt,
  keepAside = false,
): Step<ComputedPlan> {
  const worldBranch = (yield* tx.getBranch(session.currentBranchId))!;
  const worldPosition = (yield* headOf(tx, worldBranch)).position;
  const common = commonPrefix(
    yield* tx.lineage(worldBranch.id),
    yield* tx.lineage(target.branchId, target.position),
    worldPosition,
    target.position,
  );
  const targetRows = yield* lineageTools(tx, target.branchId, target.position);
  const worldRest = (yield* lineageTools(tx, worldBranch.id)).filter((t) => t.position > common);
  const appliedRows = yield* tx.appliedTools(session.id);
  const recorded = new Map<string, boolean | null>();
  for (const rows of [targetRows, appliedRows]) for (const row of rows) recorded.set(row.id, row.reversible);
  const targetTools = targetRows.map(toToolInvocation);
  const divergent = [...worldRest.map(toToolInvocation), ...targetTools.filter((t) => t.position > common)];
  const applied = appliedRows.map(withAppliedResult).map(toToolInvocation);
  const uncertain = new Set(yield* tx.uncertainInvocations(session.id));
  const handling = (inv: ToolInvocation) => handlingOf(ctx, inv.tool, recorded.get(inv.id) ?? null);
  // Only a call whose effect is in the files comes back with them: one whose run recorded changing no workspace path
  // (its effect lies elsewhere) is undone and replayed through its tool as in a move without files. A call with no
  // record (an older database's, or run in a workspace on another host) is taken to be in the files, as snapshots
  // cannot tell.
  const { outside, idle } = snapshotAt === undefined && !session.hasWorkspace ? NO_REACH : yield* pathlessReach(tx, session.id, ctx.tools);
  // A move without files undoes and replays each call through its tool; only its undo order reads where their effects
  // lie: a call that changed no workspace file stays applied above one that changed some (see `planSteps`' `inFiles`).
  const inFiles =
    snapshotAt !== undefined ? undefined : new Set(session.hasWorkspace ? (yield* fileCalls(tx, session.id)).map((c) => c.id) : []);
  const held = [...(snapshotAt?.held ?? [])].filter((id) => !outside.has(id));
  // The calls off the snapshot's lineage its files hold are kept as the target's it holds are: left applied, or marked
  // so. An irreversible one stays applied anyway, and is reported as any other the move passes. A call of a tool acting
  // only in the workspace that changed no file did nothing: any files hold it, wherever it sits (run again over them,
  // it could change what later calls or hand edits made of them).
  const covered =
    snapshotAt === undefined
      ? undefined
      : new Set([
          ...targetTools
            .filter((t) => t.position <= snapshotAt.position && !snapshotAt.unapplied.has(t.id) && !outside.has(t.id))
            .map((t) => t.id),
          ...targetTools.filter((t) => idle.has(t.id) && t.status === "succeeded").map((t) => t.id),
          ...held.filter((id) => !applied.some((t) => t.id === id && handling(t) === "irreversible")),
        ]);
  // Calls a files-only restore set aside and nothing applied since stay out of a move with files, as they are.
  // So do they out of a "both" move that restores no files (a switch to the current branch: `keepAside`).
  const asideNow = snapshotAt === undefined && !keepAside ? new Set<string>() : yield* setAsideOn(tx, session.id, target);
  const left = leftOut(targetTools, snapshotAt, asideNow, covered);
  const shared = sharedAfter(targetTools, snapshotAt, common, new Set([...outside, ...uncertain, ...left]));
  yield* withoutPathless(tx, shared);
  const steps = planSteps(
    applied,
    targetTools,
    divergent,
    handling,
    uncertain,
    yield* tx.importedCalls(session.id),
    covered,
    left,
    outside,
    shared,
    inFiles,
  );
  const undone = new Set(steps.undo.map((t) => t.id));
  const stays = [...shared].filter((id) => !undone.has(id));
  if (snapshotAt) {
    // A held call undone first (applied after one the move undoes) comes back with the files as those undone before did.
    const stayApplied = appliedRows.filter((r) => !undone.has(r.id));
    steps.covered.push(...(yield* heldOffTarget(tx, held, targetTools, stayApplied, uncertain)));
    // Marked as they were applied when the snapshot was taken, off the target's lineage or on it: a later undo then
    // takes them back last first.
    byApplication(steps.covered, snapshotAt.order ?? []);
  }
  return { steps, common, worldBranchId: worldBranch.id, worldPosition, stays };
}

/**
 * The applied calls of the target's lineage made after the restored snapshot, up to the point the world's lineage
 * shares with it (`common`): their effects are in the world on both sides of the move, so it neither undoes nor
 * replays them (as a move without files does not); the snapshot, older, does not hold them, so its restore gives the
 * paths they changed what they left there, not what one side changed since (see `keptTarget`). Not `besides`: those whose run changed no workspace
 * file (they stay applied anyway), those of unknown outcome, and those the move leaves out of the target (see `leftOut`:
 * a files-only restore set them aside there).
 */
function sharedAfter(
  targetTools: readonly ToolInvocation[],
  snapshotAt: SnapshotAt | undefined,
  common: number,
  besides: ReadonlySet<string>,
): Set<string> {
  if (snapshotAt === undefined || snapshotAt.position >= common) return new Set();
  const after = (t: ToolInvocation) => t.position > snapshotAt.position && t.position <= common;
  return new Set(targetTools.filter((t) => after(t) && t.applied && !besides.has(t.id)).map((t) => t.id));
}

/**
 * Takes out of `shared` (in place) the calls with no record of the paths their run changed (`recordToolCall`'s,
 * LangGraph's, an older database's, one that outlived the wait for its changes): the restore could only read their
 * paths between the snapshots around them, and a snapshot holding such a call at or before the shared point would be
 * the restored one (the newest there), so the one after it lies past that point, on one side, holding what that side
 * changed since (a hand edit, another call) too. They are undone and replayed through their tool instead, as a move
 * whose snapshot is newer than the shared point undoes and replays the calls after it.
 */
function* withoutPathless(tx: Tx, shared: Set<string>): Step<void> {
  for (const id of [...shared]) if ((yield* tx.callPaths(id)) === undefined) shared.delete(id);
}

/**
 * The calls off the target lineage that the restored files hold and that are not applied now (undone since the
 * snapshot was taken), or that the move undoes: their effects come back with the files, so they are marked applied
 * with them, never run.
 */
function* heldOffTarget(
  tx: Tx,
  held: readonly string[],
  targetTools: readonly ToolInvocation[],
  appliedRows: readonly ToolRow[],
  uncertain: ReadonlySet<string>,
): Step<ToolInvocation[]> {
  const out: ToolInvocation[] = [];
  for (const id of held) {
    if (uncertain.has(id) || appliedRows.some((r) => r.id === id) || targetTools.some((t) => t.id === id)) continue;
    const row = yield* tx.getTool(id);
    if (row?.status === "succeeded") out.push(toToolInvocation(row));
  }
  return out;
}

/**
 * The calls set aside on a branch the target's lineage goes through (see `setAside`): a move to another branch, where
 * they were applied, replays them.
 */
function* setAsideOn(tx: Tx, sessionId: string, target: MoveTarget): Step<Set<string>> {
  const aside = yield* tx.setAsideCalls(sessionId);
  if (aside.length === 0) return new Set();
  return new Set(yield* asideOnLineage(tx, aside, { segments: yield* tx.lineage(target.branchId, target.position) }));
}

/**
 * The succeeded calls the snapshot does not hold although it holds a later one, or that a files-only restore had taken
 * out of the world when it was taken (`aside`, for a move to that very checkpoint), and the target's unapplied calls
 * that one set aside and nothing applied since (`asideNow`) unless the snapshot holds them: they stay unapplied (see
 * `planSteps`' `left`).
 */
function leftOut(
  targetTools: ToolInvocation[],
  snapshotAt: SnapshotAt | undefined,
  asideNow: ReadonlySet<string>,
  covered: ReadonlySet<string> | undefined,
): Set<string> {
  // Applied since on another lineage (a move elsewhere replayed it), it is still out of this one: undone.
  const setAside = (t: ToolInvocation) => asideNow.has(t.id) && t.status === "succeeded" && !covered?.has(t.id);
  if (snapshotAt === undefined) return new Set(targetTools.filter(setAside).map((t) => t.id));
  const upTo = targetTools.filter((t) => t.position <= snapshotAt.position && t.status === "succeeded");
  const lastHeld = upTo.findLast((t) => !snapshotAt.unapplied.has(t.id));
  const left = (t: ToolInvocation) =>
    snapshotAt.unapplied.has(t.id) && ((lastHeld !== undefined && t.position < lastHeld.position) || !!snapshotAt.aside?.has(t.id));
  return new Set([...upTo.filter(left), ...targetTools.filter(setAside)].map((t) => t.id));
}

/**
 * A call recorded without an undo stays irreversible; one recorded with an undo needs it registered here
 * ("unregistered" otherwise); one of unknown kind (recorded before this was kept) is what its tool is here now.
 */
function handlingOf(ctx: EngineContext, tool: string, reversible: boolean | null): Handling {
  if (reversible === false) return "irreversible";
  if (ctx.tools.isReversible(tool)) return "reversible";
  return reversible === true ? "unregistered" : "irreversible";
}

/** An applied invocation carries the result of its latest application (a replay may have changed it). */
function withAppliedResult(row: ToolRow): ToolRow {
  return row.appliedResult === null ? row : { ...row, result: row.appliedResult };
}

/** The world lineage's entries after the shared prefix: what a move leaves behind. */
export function* leftBehind(ctx: EngineContext, tx: Tx, plan: ComputedPlan): Step<Entry[]> {
  const tools = new Map((yield* lineageTools(tx, plan.worldBranchId)).map((t) => [t.id, t]));
  return (yield* lineageEntries(tx, plan.worldBranchId)).filter((e) => e.position > plan.common).map((e) => toEntry(tools.get(e.id) ?? e));
}
