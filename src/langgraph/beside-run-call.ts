// A node's call made after another run's call beside its run (two runs of one thread at once) is refused at once.
// That run's put would fork before the other run's call, undoing its own (`stepCalls` in put-plan.ts), so the call
// is refused before its tool runs: interleaved calls (a `Send` fan-out's parts in two resumes) never stop both runs.
import { ConflictError } from "../models/errors.js";
import { GENESIS_HASH, entryAt } from "../sessions/langgraph-bridge.js";
import type { EntryRow, Step, Tx } from "../store/port/index.js";
import type { RunMark } from "./run-calls.js";
import type { GuardedThread } from "./run-fork-guard.js";
import type { SaverParts } from "./saver-parts.js";

/**
 * In the unit journaling `entry` (a call of `run`, whose step runs from the root graph's checkpoint `runAt`): refuses it
 * (`SESSION_MOVED`) when a call of another run beside `run` (`RunCalls.foreign`) follows that checkpoint on the call's
 * lineage, before it. Where the checkpoint is not stored or is off the call's lineage, nothing is refused here.
 */
export function* refuseCallAfterOtherRun(
  tx: Tx,
  parts: SaverParts,
  sessionId: string,
  thread: GuardedThread,
  runAt: string,
  entry: EntryRow,
  run: RunMark,
): Step<void> {
  if (!parts.runs.anyForeign(sessionId, run)) return;
  const row = yield* tx.langgraph.getCheckpoint(sessionId, runAt);
  const fp = row ? yield* tx.getCheckpoint(row.fpCheckpointId) : undefined;
  const branch = fp ? yield* tx.getBranch(entry.branchId) : undefined;
  if (!fp || !branch) return;
  const at = yield* entryAt(tx, branch, fp.position);
  if ((at?.hash ?? GENESIS_HASH) !== fp.headHash) return;
  for (let position = fp.position + 1; position < entry.position; position++) {
    const before = yield* entryAt(tx, branch, position);
    if (before?.kind === "tool" && parts.runs.foreign(sessionId, before.id, run)) throw callAfterOtherRun(thread);
  }
}

const callAfterOtherRun = (thread: GuardedThread) =>
  new ConflictError(
    `thread ${thread.threadId}: another run of the thread made tool calls since this run's last checkpoint, which ` +
      "this run's put would fork before, undoing this call: the run is stopped: invoke the graph again to go on from " +
      "where the session is now",
    "SESSION_MOVED",
  );
