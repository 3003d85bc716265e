// Decides what a move does to the world: which applied invocations to undo (LIFO over the whole applied set) and which
// to replay (oldest first).
// Pure: it works on what is applied and on the target lineage, so a half-done move recomputes to exactly the rest.

/** The facts about an invocation that the plan needs. */
export interface PlannedInvocation {
  id: string;
  tool: string;
  status: "running" | "succeeded" | "failed";
  applied: boolean;
}

/**
 * What this opener can do with an invocation: undo and replay it ("reversible"), nothing ("irreversible": its tool had
 * no undo), or nothing although its tool had an undo when it ran ("unregistered": that tool is not registered here).
 */
export type Handling = "reversible" | "irreversible" | "unregistered";

export interface StepPlan<T extends PlannedInvocation> {
  /**
   * Applied invocations off the target lineage, newest application first; with them, those that stay applied (the
   * target's, or the restored files') applied after one of them: undone first, then replayed (or covered) after it.
   */
  undo: T[];
  /** Succeeded invocations of the target lineage unapplied, or undone by this move, oldest first. */
  replay: T[];
  /**
   * Irreversible (or imported) invocations passed by the move: left as they are, never replayed. With them, the
   * reversible ones it would undo that were applied before a call it keeps and cannot undo (irreversible, unregistered,
   * or of unknown outcome), or before one it must undo whose tool is not registered here (`unregistered`, left applied
   * when the move goes on): left applied, as a saga stops compensating at such a step (a move with files keeps the
   * paths their effects are in as the world has them).
   */
  skipped: T[];
  /** Reversible invocations the move must undo or replay, of tools not registered here with an undo. */
  unregistered: T[];
  /** Invocations left `running` by a crash on either side of the move: never touched automatically. */
  unknown: T[];
  /**
   * A move that restores files: unapplied invocations of the target lineage whose effects the restored snapshot holds
   * (made at or before its position). They are marked applied, with their recorded results, and never run.
   */
  covered: T[];
}

/**
 * @param applied the world's applied invocations, newest application first
 * @param target the target lineage's invocations, in position order
 * @param divergent invocations of both lineages after their common prefix (for `unknown`)
 * @param handling what this opener can do with an invocation
 * @param uncertain invocations whose undo/replay step was interrupted by a crash: their effect may or may not
 *   be in the world, so no later move touches them automatically (reported as unknown when passed)
 * @param foreign invocations that never ran in this world (imported): never replayed, reported as skipped when passed
 * @param left for a move that restores files: the target lineage's invocations the restored snapshot does not hold
 *   although it holds a later one (a stopped move undid them, then calls went on): replayed on top of those files, their
 *   effect would land over the later calls', so they stay unapplied, as they were when the snapshot was taken
 * @param covered for a move that restores files: the target lineage's invocations made at or before the restored
 *   snapshot's position, less those that were not applied when it was taken (its files do not hold them: they are
 *   undone first when applied, and replayed), and the target lineage's calls of a tool acting only in the workspace
 *   that changed no file, wherever they sit (they did nothing). Their effects come back with the files: they are never
 *   replayed (`covered` when unapplied).
 *   The target's later invocations that are applied are undone before the files are restored (their undo finds what
 *   they wrote) and replayed on top of the snapshot.
 * @param outside for a move that restores files: invocations whose run changed no workspace file (their effect lies
 *   outside what a snapshot captures). Never in `covered`; the target lineage's stay applied as in a move without
 *   files, and are replayed when unapplied.
 * @param shared for a move that restores files from a snapshot older than the point the world and the target share:
 *   the applied invocations of that shared part made after the snapshot. They stay applied as in a move without files
 *   (the restore keeps their files as the world has them), unless one the move replays comes before them.
 * @param inFiles for a move without files: the invocations whose run changed workspace files (with files, every one
 *   not `outside` is taken to be in them, a call with no record of its paths too). A kept invocation in `outside` is
 *   not undone first for one of them (see `undoAbove`).
 */
export function planSteps<T extends PlannedInvocation>(
  applied: T[],
  target: T[],
  divergent: T[],
  handling: (inv: T) => Handling,
  uncertain: ReadonlySet<string> = new Set(),
  foreign: ReadonlySet<string> = new Set(),
  covered?: ReadonlySet<string>,
  left: ReadonlySet<string> = new Set(),
  outside: ReadonlySet<string> = new Set(),
  shared: ReadonlySet<string> = new Set(),
  inFiles?: ReadonlySet<string>,
): StepPlan<T> {
  const onTarget = new Set(target.map((t) => t.id));
  // What stays applied as it is: the target lineage's calls, or with files those the snapshot holds and the target's
  // whose effect lies outside the files (the restore leaves it as it is), and those the world shares with the target
  // made after the snapshot (the restore keeps their files as they are).
  const kept =
    covered === undefined ? new Set(onTarget) : new Set([...covered, ...[...outside, ...shared].filter((id) => onTarget.has(id))]);
  // Replays keep the lineage's order: a target call applied after one to replay (landed there with `after` while the
  // session was elsewhere) is undone first and replayed after it, unless it cannot be undone here.
  const first = target.find(
    (t) =>
      t.status === "succeeded" &&
      !t.applied &&
      !left.has(t.id) &&
      !covered?.has(t.id) &&
      !uncertain.has(t.id) &&
      !foreign.has(t.id) &&
      handling(t) === "reversible",
  );
  const firstAt = first === undefined ? -1 : target.indexOf(first);
  if (firstAt >= 0)
    for (const t of target.slice(firstAt + 1))
      if (t.applied && !uncertain.has(t.id) && handling(t) === "reversible" && !covered?.has(t.id)) kept.delete(t.id);
  const passed = new Set(divergent.map((t) => t.id));
  const plan: StepPlan<T> = { undo: [], replay: [], skipped: [], unregistered: [], unknown: [], covered: [] };
  const unknown = new Set<string>();
  const markUnknown = (inv: T) => {
    if (!unknown.has(inv.id)) {
      unknown.add(inv.id);
      plan.unknown.push(inv);
    }
  };
  const undone = new Set<string>();
  // Undo is LIFO over the whole applied set: a call that stays applied (kept) but was applied after one the move undoes
  // is undone first and replayed after it, so the older undo never runs under its effect. `above`: the kept calls seen
  // so far (newer than the current one), not undone yet; `pivot`: a newer kept call that cannot be undone here.
  let above: T[] = [];
  let pivot: { inv: T; handling: Handling | null } | undefined;
  // A kept call whose run changed no workspace file stays applied above one whose effect is in the files: their effects
  // lie apart, so the older undo cannot find the later effect, and undoing it first would retract and run again an
  // effect (a message, a notification) the move has no reason to touch. It comes off first only above one acting
  // outside the files too, or of unknown reach, where the two effects may meet.
  const inTheFiles = (inv: T) => (inFiles === undefined ? covered !== undefined && !outside.has(inv.id) : inFiles.has(inv.id));
  const undoAbove = (under: T) => {
    const stay = (later: T) => outside.has(later.id) && inTheFiles(under);
    for (const later of above.filter((t) => !stay(t))) {
      plan.undo.push(later);
      undone.add(later.id);
    }
    above = above.filter(stay);
  };
  for (const inv of applied) {
    if (kept.has(inv.id)) {
      const h = uncertain.has(inv.id) ? null : handling(inv);
      if (h === "reversible") above.push(inv);
      // A move with files stops at one too: its effect may lie outside the files (or in paths the restore does not
      // reach), where an undo run under it would destroy it for good.
      else pivot ??= { inv, handling: h };
      continue;
    }
    if (uncertain.has(inv.id)) {
      markUnknown(inv);
      continue;
    }
    const h = handling(inv);
    // A saga's compensation stops at a step it cannot compensate: this call stays applied under it, as it is. A pivot
    // whose tool is only not registered here is one the move must undo when the call under it must come off: refused
    // as any such call, unless left. Over a call of the target's lineage the move undoes only to replay it, it is a stop
    // as any other: that call stays applied, as the target has it.
    if (h === "reversible" && pivot !== undefined) {
      const mustGo = !onTarget.has(inv.id) || left.has(inv.id);
      if (pivot.handling === "unregistered" && mustGo && !plan.unregistered.includes(pivot.inv)) plan.unregistered.push(pivot.inv);
      plan.skipped.push(inv);
    } else if (h === "reversible") {
      undoAbove(inv);
      plan.undo.push(inv);
      undone.add(inv.id);
    }
    // Its undo exists, only not here: the move must undo it, whether or not it passes the call. Left applied (when
    // told to leave it), it is undone later, by an opener with its tool: the calls applied before it stay applied
    // under it until then, as under any call the move keeps and cannot undo (LIFO holds for that later undo).
    else if (h === "unregistered") {
      plan.unregistered.push(inv);
      pivot ??= { inv, handling: h };
    }
    // An irreversible effect stays in the world; only a move that passes its call (or restores files from before
    // it, which it cannot run again on top of) reports it.
    else if (passed.has(inv.id) || onTarget.has(inv.id)) plan.skipped.push(inv);
  }
  for (const inv of target) {
    if (inv.status !== "succeeded" || (inv.applied && !undone.has(inv.id)) || left.has(inv.id)) continue;
    const h = uncertain.has(inv.id) || foreign.has(inv.id) ? null : handling(inv);
    if (uncertain.has(inv.id)) markUnknown(inv);
    else if (covered?.has(inv.id) && h !== null && h !== "irreversible") plan.covered.push(inv);
    else if (h === "reversible") plan.replay.push(inv);
    else if (h === "unregistered") plan.unregistered.push(inv);
    else if (passed.has(inv.id)) plan.skipped.push(inv);
  }
  for (const inv of divergent) if (inv.status === "running" || uncertain.has(inv.id)) markUnknown(inv);
  return plan;
}
