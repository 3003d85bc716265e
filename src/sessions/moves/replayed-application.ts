// Whether a call stands applied by a replay rather than by its first run: its undo then puts back what the replay found.
import type { Step, ToolRow, Tx } from "../../store/port/index.js";

/** Whether applied call `row` is applied by a replay (its result kept for that application), not by its first run. */
export function* replayedApplication(tx: Tx, row: ToolRow): Step<boolean> {
  return row.appliedSeq !== null && (yield* tx.replayResult(row.id, row.appliedSeq)) !== undefined;
}
