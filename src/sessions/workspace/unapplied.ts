// Which of a snapshot's lineage calls its files do not hold: recorded with the snapshot, read by a move restoring it.
import type { SessionRow, Step, Tx } from "../../store/port/index.js";
import { lineageTools } from "../log/lineage.js";

/**
 * The calls of the lineage up to `position` on `branchId` that succeeded in this world and are not applied now (a move
 * stopped by a failing undo left them undone): the files read now do not hold their effects. A JSON array of their ids
 * in lineage order, or null when there is none (every call the files could hold is applied).
 */
export function* unappliedCalls(
  tx: Tx,
  session: Pick<SessionRow, "id" | "hasTools">,
  branchId: string,
  position: number,
): Step<string | null> {
  if (!session.hasTools) return null;
  const imported = yield* tx.importedCalls(session.id);
  const ids = (yield* lineageTools(tx, branchId, position))
    .filter((t) => t.status === "succeeded" && t.appliedSeq === null && !imported.has(t.id))
    .map((t) => t.id);
  return ids.length === 0 ? null : JSON.stringify(ids);
}

/** A snapshot's record of the calls its files do not hold (none for null: snapshots stored before it was kept). */
export function unappliedSet(text: string | null | undefined): ReadonlySet<string> {
  if (!text) return new Set();
  const ids = JSON.parse(text) as unknown;
  return new Set(Array.isArray(ids) ? ids.filter((id): id is string => typeof id === "string") : []);
}
