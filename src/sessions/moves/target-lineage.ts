// The lineage a move's target goes through: where a call it applies stops being set aside (see `asideCleared`).
import type { Step, Tx } from "../../store/port/index.js";
import type { AsideLineage } from "../workspace/unapplied.js";
import type { MoveSpec } from "./move-spec.js";

/** The lineage of a move's target, with the branch it makes (a rollback's, an edit's). */
export function* targetLineage(tx: Tx, spec: Pick<MoveSpec, "target" | "newBranch">): Step<AsideLineage> {
  const segments = yield* tx.lineage(spec.target.branchId, spec.target.position);
  const made = spec.newBranch ? { id: spec.newBranch.id, forkCheckpointId: spec.newBranch.forkCheckpointId } : undefined;
  return { segments, made };
}
