// The result a call's next undo gets when a move marks it applied again without running it (its effect came back with
// restored files): that of the application the restored snapshot holds.
import type { Step, ToolRow, Tx } from "../../store/port/index.js";
import { asideCleared, type AsideLineage } from "../workspace/unapplied.js";

/**
 * Marks `row` applied again, as the files a move restored hold it: with the result of the application `application`
 * names (an `applied_seq` the call had when the snapshot was read, by a replay: the snapshot records it, see
 * `snapshotCalls`), else with its first run's. A replay's result depends on the world it ran in (an append's size
 * before it), and restored files hold that world. A snapshot read before applications were recorded names none: the
 * replay kept for the call then (unnamed) is the one it may hold, as before. A named application whose result is not
 * kept (a database journaled before results were) gets the most recent replay's, as before. A replay's result is kept
 * again for this application, so a snapshot read later names it. `through`: the lineage the files are restored for
 * (see `markApplied`).
 */
export function* markHeld(
  tx: Tx,
  sessionId: string,
  row: ToolRow,
  application: number | undefined,
  at: number,
  through?: AsideLineage,
): Step<void> {
  const replay =
    application === undefined
      ? yield* tx.replayResult(row.id, null)
      : ((yield* tx.replayResult(row.id, application)) ?? (yield* tx.lastReplay(sessionId, row.id)));
  const cleared = through && (yield* asideCleared(tx, sessionId, row.id, through));
  yield* tx.markApplied(row.id, sessionId, replay === undefined ? row.result : replay.result, at, cleared);
  if (replay !== undefined) yield* tx.keepReplayResult(row.id, sessionId, replay.result, at);
}

/**
 * Whether applied call `row` is applied by another application than the one restored files hold (`application`, as
 * `markHeld` takes it): a replay since, or the first run where they hold a replay. Such a call is marked again.
 */
export function* heldOtherwise(tx: Tx, row: ToolRow, application: number | undefined): Step<boolean> {
  if (row.appliedSeq === null) return false;
  if (application !== undefined) return row.appliedSeq !== application;
  return (yield* tx.replayResult(row.id, row.appliedSeq)) !== undefined;
}
