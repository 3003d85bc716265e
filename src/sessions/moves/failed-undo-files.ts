// What a "both" move's restore leaves to the calls it leaves applied: those whose undo failed ("continue"), those left
// under a kept call it cannot undo, those left for want of their tool, and the applied irreversible ones its snapshot
// does not hold. Their effects stay, so the files holding them stay as they are, and the move restores the target's
// snapshot with those paths as the world has them.
import type { MoveStepRow, Step, ToolRow, Tx } from "../../store/port/index.js";
import { DRIFTED_ONLY } from "../workspace/named-files.js";
import { notHeld, snapshotHolds } from "../workspace/unapplied.js";
import { TreeReader, applyChanges, diffTrees, filesAt } from "../workspace/trees.js";
import { sharedOutputs } from "./shared-outputs.js";
import type { MoveSpec } from "./move-spec.js";

/** The snapshot a move's files step restores, and the paths of it left as they are (none unless it leaves calls applied). */
export interface KeptTarget {
  manifestId: number;
  kept: string[];
  /**
   * Those of `kept` the move reports (`files.kept`); absent: all. Paths kept only for calls the world shares with the
   * target (`LeftApplied.shared`) are not reported: they are the target's files as much as the world's; nor are those
   * of other calls that hold just what the shared ones left there.
   */
  shown?: string[];
  /**
   * Every file stays as it is: no snapshot precedes a call whose undo failed, so the paths its effect is in are not
   * known. The target's calls its snapshot holds are then not applied again either (their files did not come back).
   */
  nothing?: true;
}

/**
 * The snapshot the files step of a move restores: its target's (`manifestId`), or, when it leaves calls applied
 * (`left`), the target's with the paths those calls' effects may be in as the workspace has them now (`known`, what
 * forkpoint last saw). Those are the paths the call's run changed (see `pathsAcross`), or for a call of `left.failed`
 * without that record the paths that differ between the newest snapshot taken before the call on its lineage and the
 * oldest one after it that holds it (or the files now); every path (`nothing`) when neither is known. The paths of
 * `left.shared` get what those calls left there when known (see `sharedOutputs`), as the workspace has them otherwise.
 * Inside a write unit: the snapshot made is stored.
 */
export function* keptTarget(
  tx: Tx,
  spec: Pick<MoveSpec, "sessionId" | "userId">,
  left: LeftApplied,
  manifestId: number,
  known: number,
): Step<KeptTarget> {
  const { failed, irreversible } = left;
  const shared = left.shared ?? [];
  // The world already has the target's files: only the shared calls' outputs may still differ from them.
  if (failed.length + irreversible.length + shared.length === 0 || (known === manifestId && shared.length === 0))
    return { manifestId, kept: [] };
  const reader = new TreeReader();
  const now = yield* reader.rootOf(tx, known);
  const target = yield* reader.rootOf(tx, manifestId);
  const restored = new Map((yield* diffTrees(tx, reader, now, target)).map((c) => [c.path, c.from]));
  const outputs = yield* sharedOutputs(tx, spec.sessionId, shared);
  // A path kept that holds what the shared calls left there (a call without recorded paths takes in every path that
  // changed across it) is what the target's lineage has too: not kept as drift, not reported.
  const sharedHas = (path: string, id: string | null) => outputs.has(path) && outputs.get(path) === id;
  const everything = (): KeptTarget => {
    const all = [...restored.keys()].sort();
    const shown = all.filter((path) => !sharedHas(path, restored.get(path)!));
    return { manifestId: known, kept: all, nothing: true, ...(shown.length === all.length ? {} : { shown }) };
  };
  const kept = new Map<string, string | null>();
  for (const id of failed) {
    const paths = yield* pathsAcross(tx, spec, reader, id, now);
    if (paths === undefined) return everything();
    for (const path of paths) if (restored.has(path)) kept.set(path, restored.get(path)!);
  }
  // An irreversible call's effect stays out there: the paths its run recorded stay as they are. One without that record
  // (`recordToolCall`'s) is taken to be in the snapshot, as moves with files take such calls.
  for (const id of irreversible)
    for (const path of (yield* tx.callPaths(id)) ?? []) if (restored.has(path)) kept.set(path, restored.get(path)!);
  // Not reported: the target's lineage holds these calls' effects too. A path gets what the newest of them left there
  // (as of the point the two sides part, not a later hand edit one side saved), or, not known, stays as the world has it.
  const shown = new Set([...kept.keys()].filter((path) => !sharedHas(path, kept.get(path)!)));
  const targetIds = yield* filesAt(tx, reader, target, [...outputs.keys()]);
  for (const id of shared) {
    const paths = yield* pathsAcross(tx, spec, reader, id, now);
    if (paths === undefined) return everything();
    for (const path of paths) {
      if (shown.has(path)) continue;
      const output = outputs.get(path);
      if (output !== undefined) {
        if (output !== (targetIds.get(path) ?? null)) kept.set(path, output);
      } else if (restored.has(path)) kept.set(path, restored.get(path)!);
    }
  }
  if (kept.size === 0) return { manifestId, kept: [] };
  const applied = yield* applyChanges(tx, reader, target, kept);
  yield* tx.insertTrees([...[...reader.ephemeralBodies].map(([hash, body]) => ({ hash, body })), ...applied.trees]);
  const all = [...kept.keys()].sort();
  return {
    manifestId: yield* tx.putManifest(applied.root, "{}", applied.root),
    kept: all,
    ...(shown.size === kept.size ? {} : { shown: all.filter((p) => shown.has(p)) }),
  };
}

/**
 * The paths call `id`'s effect may be in: those its run changed, as recorded then; for a call without that record (run
 * before it was kept, or without a local workspace), those that differ between the newest snapshot before it on its
 * lineage and the oldest one after it that holds it (or `otherwise`, a tree's root, when none does); undefined when no
 * snapshot precedes it (any path may be).
 */
export function* pathsAcross(
  tx: Tx,
  spec: Pick<MoveSpec, "sessionId" | "userId">,
  reader: TreeReader,
  id: string,
  otherwise: string,
): Step<string[] | undefined> {
  const known = yield* knownCallPaths(tx, id);
  if (known !== undefined) return known;
  const call = yield* tx.getTool(id);
  const before = call && (yield* snapshotBefore(tx, call));
  if (!call || before === undefined) return undefined;
  const after = yield* snapshotAfter(tx, spec, call);
  const [from, to] = [yield* reader.rootOf(tx, before), after === undefined ? otherwise : yield* reader.rootOf(tx, after)];
  return (yield* diffTrees(tx, reader, from, to)).map((c) => c.path);
}

/** The calls whose undo failed among a move's `steps` (under "continue"): they stay applied. */
export function failedUndos(steps: readonly MoveStepRow[]): string[] {
  return steps.filter((s) => s.op === "undo" && s.status === "failed").map((s) => s.entryId);
}

/**
 * The calls a "both" move leaves applied that its restore must not take the effects of (see `keptTarget`): `failed`,
 * those whose undo failed (under "continue"), those a crash left of unknown outcome, those of its `skipped` it would have undone but left applied under a
 * kept call it cannot undo (compensation stops there), its `unregistered` ones still applied (left for want of
 * their tool: the next move by an opener with it undoes them, and its undo must find their effect); `irreversible`,
 * the applied irreversible calls whose run changed workspace files that the restored snapshot does not hold (see
 * `irreversibleOutside`).
 */
export interface LeftApplied {
  failed: string[];
  irreversible: string[];
  /**
   * The calls the world shares with the target after its snapshot, still applied (`files.stays`): their paths get what
   * they left there (or stay as the world has them), not reported.
   */
  shared?: string[];
}

/**
 * The calls a crash left of unknown outcome (their undo or replay interrupted, in any move), still applied, whose run
 * recorded its paths: no move undoes or replays them until they are resolved (restored away, one resolved as not undone
 * would have lost its effect), so those paths stay as they are, as a failed undo's. (One without that record is taken
 * to be in the snapshots, as moves with files take such calls: else no file at all could be restored.)
 */
export function* uncertainApplied(tx: Tx, sessionId: string): Step<string[]> {
  const out: string[] = [];
  for (const id of yield* tx.uncertainInvocations(sessionId)) {
    const row = yield* tx.getTool(id);
    if (row && row.appliedSeq !== null && (yield* knownCallPaths(tx, id)) !== undefined) out.push(id);
  }
  return out;
}

/**
 * The paths a call's effect is known to be in: those its run changed, as recorded then, or for a call recorded with
 * `recordToolCall` the files its record found where its arguments name (as its undo and replay write them, see
 * `stepWrites`). Undefined when neither is known.
 */
export function* knownCallPaths(tx: Tx, id: string): Step<string[] | undefined> {
  const paths = yield* tx.callPaths(id);
  if (paths !== undefined) return paths;
  const recorded = yield* tx.recordedFiles(id);
  return recorded && [...recorded.keys()].filter((path) => recorded.get(path) !== DRIFTED_ONLY);
}

/** The calls move `spec` leaves applied (see `LeftApplied`), given the steps it ran and the snapshot it restores. */
export function* leftApplied(
  tx: Tx,
  isReversible: (tool: string) => boolean,
  spec: Pick<MoveSpec, "sessionId" | "skipped" | "unregistered" | "target" | "files">,
  steps: readonly MoveStepRow[],
  at: SnapshotCalls | undefined,
): Step<LeftApplied> {
  const out: LeftApplied = { failed: failedUndos(steps), irreversible: [] };
  for (const id of spec.skipped) {
    const row = yield* tx.getTool(id);
    if (row && row.appliedSeq !== null && !irreversibleRow(row, isReversible) && isReversible(row.tool ?? "")) out.failed.push(id);
  }
  for (const id of spec.unregistered ?? []) {
    const row = yield* tx.getTool(id);
    if (row && row.appliedSeq !== null && !out.failed.includes(id)) out.failed.push(id);
  }
  for (const id of yield* uncertainApplied(tx, spec.sessionId)) if (!out.failed.includes(id)) out.failed.push(id);
  out.irreversible = yield* irreversibleOutside(tx, isReversible, spec.sessionId, spec.target, at);
  const shared: string[] = [];
  for (const id of spec.files?.stays ?? []) {
    const row = yield* tx.getTool(id);
    if (row && row.appliedSeq !== null && !out.failed.includes(id) && !out.irreversible.includes(id)) shared.push(id);
  }
  return shared.length === 0 ? out : { ...out, shared };
}

/** A restored snapshot: where it sits on the target's lineage, and which calls its files hold (see `snapshotHolds`). */
export type SnapshotCalls = { position: number } & Parameters<typeof snapshotHolds>[1];

/**
 * The applied irreversible calls whose run changed workspace files (recorded paths) that snapshot `at` of the lineage
 * of `target` does not hold: an irreversible call stays applied, its effect still out there, and no move runs it
 * again, so a restore of files without it must leave its paths as they are (whether or not the move passes it: a second
 * rewind to the same point must not take what the first one kept). A call without recorded paths is taken to be in the
 * snapshot, as moves with files take such calls.
 */
export function* irreversibleOutside(
  tx: Tx,
  isReversible: (tool: string) => boolean,
  sessionId: string,
  target: { branchId: string; position: number },
  at: SnapshotCalls | undefined,
): Step<string[]> {
  const applied = yield* tx.appliedCalls(sessionId);
  if (applied.length === 0) return [];
  const segments = at === undefined ? [] : yield* tx.lineage(target.branchId, at.position);
  const out: string[] = [];
  for (const call of applied) {
    if (at !== undefined && snapshotHolds(segments, at, call)) continue;
    const row = yield* tx.getTool(call.id);
    if (!row || !irreversibleRow(row, isReversible)) continue;
    if (((yield* tx.callPaths(call.id)) ?? []).length > 0) out.push(call.id);
  }
  return out;
}

/**
 * The paths a "both" move to `target` keeps as they are whatever it runs: those the applied irreversible calls its
 * snapshot `at` does not hold changed (see `irreversibleOutside`), and those of the calls a crash left of unknown
 * outcome (see `uncertainApplied`), as their runs recorded them.
 */
export function* keptCallPaths(
  tx: Tx,
  isReversible: (tool: string) => boolean,
  sessionId: string,
  target: { branchId: string; position: number },
  at: SnapshotCalls | undefined,
): Step<string[]> {
  const calls = [...(yield* irreversibleOutside(tx, isReversible, sessionId, target, at)), ...(yield* uncertainApplied(tx, sessionId))];
  const kept = new Set<string>();
  for (const id of calls) for (const p of (yield* knownCallPaths(tx, id)) ?? []) kept.add(p);
  return [...kept].sort();
}

/** Whether a call is irreversible: recorded without an undo, or of unknown kind and of a tool without one here. */
const irreversibleRow = (row: ToolRow, isReversible: (tool: string) => boolean): boolean =>
  row.reversible === false || (row.reversible === null && !isReversible(row.tool ?? ""));

/** The snapshot of the newest checkpoint with files on the call's lineage before it, if any. */
function* snapshotBefore(tx: Tx, call: ToolRow): Step<number | undefined> {
  const segments = yield* tx.lineage(call.branchId, call.position - 1);
  for (let i = segments.length - 1; i >= 0; i--) {
    const s = segments[i]!;
    const found = yield* tx.lastFilesPosition(s.branchId, s.after, s.upTo);
    if (found !== undefined) return (yield* tx.lastCheckpointFiles(s.branchId, found, found))?.manifestId;
  }
  return undefined;
}

/** The snapshot of the oldest checkpoint with files on the call's branch after it whose files hold it, if any. */
function* snapshotAfter(tx: Tx, spec: Pick<MoveSpec, "sessionId" | "userId">, call: ToolRow): Step<number | undefined> {
  const later = (yield* tx.sessionCheckpoints(spec.userId, spec.sessionId))
    .filter((c) => c.branchId === call.branchId && c.position >= call.position)
    .sort((a, b) => a.position - b.position || a.seq - b.seq);
  for (const c of later) {
    const files = yield* tx.checkpointManifest(c.id);
    if (files && !notHeld(files).has(call.id)) return files.manifestId;
  }
  return undefined;
}
