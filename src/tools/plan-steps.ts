// Decides what a move does to the world: which applied invocations to undo (LIFO) and which to replay (oldest first).
// Pure: it works on what is applied and on the target lineage, so a half-done move recomputes to exactly the rest.

/** The facts about an invocation that the plan needs. */
export interface PlannedInvocation {
  id: string;
  tool: string;
  status: "running" | "succeeded" | "failed";
  applied: boolean;
}

export interface StepPlan<T extends PlannedInvocation> {
  /** Applied invocations off the target lineage, newest application first. */
  undo: T[];
  /** Succeeded, unapplied invocations of the target lineage, oldest first. */
  replay: T[];
  /** Irreversible (or imported) invocations passed by the move: left as they are, never replayed. */
  skipped: T[];
  /** Invocations left `running` by a crash on either side of the move: never touched automatically. */
  unknown: T[];
}

/**
 * @param applied the world's applied invocations, newest application first
 * @param target the target lineage's invocations, in position order
 * @param divergent invocations of both lineages after their common prefix (for `unknown`)
 * @param isReversible whether a tool has a registered `undo`
 * @param uncertain invocations whose undo/replay step was interrupted by a crash: their effect may or may not
 *   be in the world, so no later move touches them automatically (reported as unknown when passed)
 * @param foreign invocations that never ran in this world (imported): never replayed, reported as skipped when passed
 */
export function planSteps<T extends PlannedInvocation>(
  applied: T[],
  target: T[],
  divergent: T[],
  isReversible: (tool: string) => boolean,
  uncertain: ReadonlySet<string> = new Set(),
  foreign: ReadonlySet<string> = new Set(),
): StepPlan<T> {
  const onTarget = new Set(target.map((t) => t.id));
  const passed = new Set(divergent.map((t) => t.id));
  const plan: StepPlan<T> = { undo: [], replay: [], skipped: [], unknown: [] };
  const unknown = new Set<string>();
  const markUnknown = (inv: T) => {
    if (!unknown.has(inv.id)) {
      unknown.add(inv.id);
      plan.unknown.push(inv);
    }
  };
  for (const inv of applied) {
    if (onTarget.has(inv.id)) continue;
    if (uncertain.has(inv.id)) markUnknown(inv);
    else if (isReversible(inv.tool)) plan.undo.push(inv);
    // An irreversible effect stays in the world; only a move that passes its call reports it.
    else if (passed.has(inv.id)) plan.skipped.push(inv);
  }
  for (const inv of target) {
    if (inv.status !== "succeeded" || inv.applied) continue;
    if (uncertain.has(inv.id)) markUnknown(inv);
    else if (isReversible(inv.tool) && !foreign.has(inv.id)) plan.replay.push(inv);
    else if (passed.has(inv.id)) plan.skipped.push(inv);
  }
  for (const inv of divergent) if (inv.status === "running" || uncertain.has(inv.id)) markUnknown(inv);
  return plan;
}
