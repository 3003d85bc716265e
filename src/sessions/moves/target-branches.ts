// The branches a move's target lineage goes through: where a call it applies stops being set aside.
import type { Step, Tx } from "../../store/port/index.js";
import type { MoveSpec } from "./move-spec.js";

/** The branches of a move's target lineage, with the branch it makes (a rollback's, an edit's). */
export function* targetBranches(tx: Tx, spec: Pick<MoveSpec, "target" | "newBranch">): Step<string[]> {
  const through = (yield* tx.lineage(spec.target.branchId, spec.target.position)).map((s) => s.branchId);
  return spec.newBranch ? [...through, spec.newBranch.id] : through;
}
