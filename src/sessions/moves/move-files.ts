// A move that restores the workspace's files (scope "both"): where its snapshot sits on the target lineage, and its
// files step, run between the move's undos and its replays.
import type { Step, ToolRow, Tx } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { prepareRestore, type PreparedRestore } from "../workspace/prepare-restore.js";
import { restoreFiles } from "../workspace/restore.js";
import { workspaceOf } from "../workspace/snapshots.js";
import { newestSnapshot } from "../workspace/newest-snapshot.js";
import { appliedOrder, heldOff, markedInOrder, notHeld, replaysHeld, setAsideIn, snapshotHolds } from "../workspace/unapplied.js";
import { heldPutBacks } from "./own-changes.js";
import { keptTarget, leftApplied, pathsAcross, type KeptTarget } from "./failed-undo-files.js";
import { TreeReader } from "../workspace/trees.js";
import { fenced } from "./fence.js";
import { heldOtherwise, markHeld } from "../core/latest-result.js";
import { outsideCalls } from "../workspace/call-reach.js";
import { mayLeaveDrift, refuseReplayOver, replayPaths, replaysOver } from "./drift-in-move.js";
import type { MoveTarget, SnapshotAt } from "./move-plan.js";
import type { MoveSpec } from "./move-spec.js";
import { targetLineage } from "./target-lineage.js";

/** A snapshot as a move restoring it reads it: and the applications it holds that were replays (see `replaysHeld`). */
export type HeldSnapshot = SnapshotAt & { replays: Record<string, number> };

/** What a move's files step wrote and deleted. */
export type RestoredFiles = { written: string[]; deleted: string[]; kept?: string[] };

/**
 * Where the snapshot a move restores (the one `targetFiles` finds) sits on the target lineage, and the calls made up to
 * there that its files do not hold, or may not (see `snapshotCalls`): the checkpoint's own when the move goes to one that captured
 * files, else the newest checkpoint with files at or before the target that holds no call set aside there.
 */
export function* snapshotPosition(
  tx: Tx,
  sessionId: string,
  target: MoveTarget,
  checkpointId: string | null,
): Step<HeldSnapshot | undefined> {
  const own = checkpointId === null ? undefined : yield* tx.checkpointManifest(checkpointId);
  // The checkpoint's own files: the calls set aside when it was taken stay out (see `setAsideIn`).
  if (own) return { position: target.position, ...snapshotCallsOf(own, true) };
  const found = yield* newestSnapshot(tx, sessionId, target);
  return found && { position: found.position, ...snapshotCallsOf(found.files, false) };
}

/**
 * What a snapshot's files row says of its calls, as a move reads it; `asTaken`: the move goes to its very checkpoint,
 * so the calls set aside then stay out even if applied since (else only those set aside now do: see `computePlan`).
 */
function snapshotCallsOf(
  files: { unapplied?: string | null; unknown?: string | null } | undefined,
  asTaken: boolean,
): Omit<HeldSnapshot, "position"> {
  const calls = { unapplied: notHeld(files), held: heldOff(files), replays: replaysHeld(files), order: appliedOrder(files) };
  const aside = asTaken ? setAsideIn(files) : new Set<string>();
  return aside.size === 0 ? calls : { ...calls, aside };
}

/**
 * The files step of journaled move `moveId`: the directory gets the target's snapshot, then the calls it holds are
 * marked applied. Drift found now arose while the move ran (it was refused before): left as it is and reported kept
 * (see drift-in-move.ts). `prepared`: the restore as checked before the move started, used when no step ran and the
 * files forkpoint knows have not changed since. Resumed after a crash, a restore that already finished is not done again.
 */
export async function restoreMoveFiles(
  ctx: EngineContext,
  moveId: string,
  spec: MoveSpec,
  prepared: PreparedRestore | null,
): Promise<RestoredFiles> {
  const files = spec.files!;
  const { ws, failed, ran, leaveDrift, replays } = await ctx.store.read((tx) => filesStepUnit(tx, ctx, spec, moveId));
  // Called again after a stop: the hand edits the stopped move's undos put back stay as they are (see `heldPutBacks`).
  const hold = replays === null ? [] : heldPutBacks(ws.dir, spec.putBacks, replays);
  // A call whose undo failed, that the move left applied under a kept call it cannot undo or for want of its tool, or
  // an irreversible one the snapshot does not hold, stays applied: the files its effect is in stay as they are (kept).
  // The calls the world shares with the target after an older snapshot give their paths what they left there (not
  // reported: see `keptTarget`).
  const target: KeptTarget =
    ws.restoring || failed.failed.length + failed.irreversible.length + (failed.shared?.length ?? 0) === 0
      ? { manifestId: files.manifestId, kept: [] }
      : await ctx.store.write({ sessionId: spec.sessionId }, (tx) => keptTarget(tx, spec, failed, files.manifestId, ws.manifestId));
  let restored: RestoredFiles = { written: [], deleted: [] };
  let left: string[] = [];
  // Once steps ran, the files are looked at even when forkpoint last saw the target's: drift to report may be there.
  if (ws.manifestId !== target.manifestId || ws.restoring || ran) {
    // Checked again once steps ran: a file changed meanwhile outside their calls' files is drift, left as it is.
    const p =
      !ran &&
      prepared &&
      prepared.manifestId === target.manifestId &&
      prepared.ws.manifestId === ws.manifestId &&
      prepared.ws.restoring === null
        ? { ...prepared, ownMove: moveId }
        : await prepareRestore(ctx, ws, target.manifestId, leaveDrift ? "leave" : false, moveId, [], hold);
    left = [...p.drifted, ...(p.held ?? [])];
    if (left.length > 0) {
      const [replays, putBack] = await ctx.store.read((tx) => replaysOver(tx, moveId, ws.dir));
      refuseReplayOver(ws.dir, left, replays, putBack);
    }
    // The move is journaled before the files move, so a crash in the middle of them finishes the restore (scope
    // "files" in its journal) and then resumes the move; it leaves the drift as it is too.
    const from = spec.from ?? spec.target;
    const at = { scope: "files", fromBranchId: from.branchId, fromHead: from.position } as const;
    if (p.changes.length > 0 || ws.restoring || ws.manifestId !== target.manifestId)
      restored = await restoreFiles(ctx, spec.sessionId, p, left.length === 0 ? at : { ...at, leave: left });
  }
  if (!("nothing" in target))
    await ctx.store.write({ sessionId: spec.sessionId }, (tx) => markCoveredUnit(tx, ctx, moveId, spec, target.kept));
  const shown = target.shown ?? target.kept;
  if (shown.length === 0 && left.length === 0) return restored;
  return { ...restored, kept: [...new Set([...(restored.kept ?? []), ...shown, ...left])].sort() };
}

function* filesStepUnit(tx: Tx, ctx: EngineContext, spec: MoveSpec, moveId: string) {
  const steps = yield* tx.moveSteps(moveId);
  const at = yield* snapshotPosition(tx, spec.sessionId, spec.target, spec.newBranch?.forkCheckpointId ?? null);
  const ws = yield* workspaceOf(tx, spec.sessionId, "scope");
  return {
    ws,
    failed: yield* leftApplied(tx, (tool) => ctx.tools.isReversible(tool), spec, steps, at),
    ran: steps.some((s) => s.status !== "pending"),
    leaveDrift: mayLeaveDrift(steps),
    replays: spec.putBacks ? yield* replayPaths(tx, moveId, ws.dir) : null,
  };
}

/**
 * The calls the restored files hold (the target's, and those off it applied when the snapshot was taken) are applied
 * again, oldest first, each with the result of the application the snapshot holds (a later undo gets it); so is one
 * the move leaves applied by another application than that one (`heldOtherwise`). A call whose effect is only in paths
 * the restore `kept` (a failed undo's, as the world has it) did not come back with the snapshot: it stays as it is.
 */
function* markCoveredUnit(tx: Tx, ctx: EngineContext, moveId: string, spec: MoveSpec, kept: readonly string[]) {
  fenced(yield* tx.renewMove(moveId, ctx.ownership.self, ctx.ownership.leaseMs ?? 0));
  const keptPaths = new Set(kept);
  const reader = new TreeReader();
  const target = keptPaths.size === 0 ? "" : yield* reader.rootOf(tx, spec.files!.manifestId);
  const replays = spec.files!.replays ?? {};
  const marked: { row: ToolRow; application: number | undefined }[] = [];
  for (const id of spec.files!.covered) {
    const row = (yield* tx.getTool(id))!;
    if (row.appliedSeq === null) marked.push({ row, application: replays[id] });
  }
  const fork = spec.newBranch?.forkCheckpointId ?? null;
  marked.push(...(yield* heldOtherwiseUnit(tx, ctx, spec.sessionId, spec.target, fork, spec.files!.covered)));
  const at = yield* snapshotPosition(tx, spec.sessionId, spec.target, fork);
  const through = yield* targetLineage(tx, spec);
  for (const { row, application } of yield* inHeldOrder(tx, ctx, spec, marked, at)) {
    const id = row.id;
    if (keptPaths.size > 0) {
      // Only when every path it may have changed was kept: its run's recorded paths say exactly which; for a call
      // without them, snapshots cannot tell which of the calls between two of them changed a path, so one that shares a
      // path with a kept call's is taken to be in the restored files.
      const paths = yield* pathsAcross(tx, spec, reader, id, target);
      if (paths !== undefined && paths.length > 0 && paths.every((p) => keptPaths.has(p))) continue;
    }
    yield* markHeld(tx, spec.sessionId, row, application, ctx.now(), through);
  }
  yield* setAsideLeft(tx, ctx, spec, at);
}

/**
 * The calls the restored snapshot lists as set aside by a files-only restore stay set aside once the move left them
 * unapplied (undone first when applied since), on the branch the move goes to: a snapshot read later there leaves them
 * out too, while a move back to a branch where they were applied replays them.
 */
function* setAsideLeft(tx: Tx, ctx: EngineContext, spec: MoveSpec, at: HeldSnapshot | undefined) {
  for (const id of at?.aside ?? []) {
    const row = yield* tx.getTool(id);
    // Where the move leaves the branch it goes to: at a new branch's fork (an edit's message comes after), or the target.
    const [branchId, head] = spec.newBranch
      ? [spec.newBranch.id, spec.newBranch.forkPosition]
      : [spec.target.branchId, spec.target.position];
    if (row?.appliedSeq === null) yield* tx.setAside(id, spec.sessionId, branchId, head, ctx.now());
  }
}

/**
 * The calls to mark, as they were applied in the restored snapshot's world, with the calls it holds that stay applied
 * but were applied after one of them there: marked again after it, so a later undo takes them all back last first.
 */
function* inHeldOrder(
  tx: Tx,
  ctx: EngineContext,
  spec: MoveSpec,
  marked: { row: ToolRow; application: number | undefined }[],
  at: HeldSnapshot | undefined,
): Step<{ row: ToolRow; application: number | undefined }[]> {
  if (marked.length === 0 || !at) return marked;
  const marking = new Set(marked.map((m) => m.row.id));
  const segments = yield* tx.lineage(spec.target.branchId, at.position);
  const outside = yield* outsideCalls(tx, spec.sessionId, ctx.tools);
  const staying = (yield* tx.appliedCalls(spec.sessionId)).filter((c) => {
    return !marking.has(c.id) && !outside.has(c.id) && snapshotHolds(segments, at, c);
  });
  const byId = new Map(marked.map((m) => [m.row.id, m]));
  const out: { row: ToolRow; application: number | undefined }[] = [];
  for (const id of markedInOrder([...marking, ...staying.map((c) => c.id)], marking, at.order ?? [])) {
    const m = byId.get(id) ?? { row: (yield* tx.getTool(id))!, application: at.replays[id] };
    out.push(m);
  }
  return out;
}

/**
 * The calls applied now that the restored snapshot holds by another application than their current one: a replay
 * since, or the first run where it holds a replay. Only calls with a replay on either side can be such (few).
 */
export function* heldOtherwiseUnit(
  tx: Tx,
  ctx: EngineContext,
  sessionId: string,
  target: MoveTarget,
  forkCheckpointId: string | null,
  covered: readonly string[],
): Step<{ row: ToolRow; application: number | undefined }[]> {
  const at = yield* snapshotPosition(tx, sessionId, target, forkCheckpointId);
  if (!at) return [];
  const now = new Map((yield* tx.replayedApplications(sessionId)).map((r) => [r.entryId, r.appliedSeq]));
  const ids = [...new Set([...now.keys(), ...Object.keys(at.replays)])];
  if (ids.length === 0) return [];
  const segments = yield* tx.lineage(target.branchId, at.position);
  // A call whose run changed no workspace file is not in the snapshot's files, whichever application it holds.
  const outside = yield* outsideCalls(tx, sessionId, ctx.tools);
  const found: { row: ToolRow; application: number | undefined }[] = [];
  for (const id of ids) {
    const row = yield* tx.getTool(id);
    if (!row || row.appliedSeq === null || covered.includes(id) || outside.has(id)) continue;
    if (!snapshotHolds(segments, at, row)) continue;
    if (yield* heldOtherwise(tx, row, at.replays[id])) found.push({ row, application: at.replays[id] });
  }
  // Oldest application first, as the covered calls are marked.
  return found.sort((a, b) => a.row.appliedSeq! - b.row.appliedSeq!);
}
