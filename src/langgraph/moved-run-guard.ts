// A graph node's tool call through `sessionFor` in a run whose thread was moved (a rollback, switch or edit, by any
// server) since the run's last put: that run's next put is refused (`SESSION_MOVED`), and the call, journaled at the
// session's head, would land on the move's branch, beside a conversation without the messages it answers. Under
// durability "async" or "sync" the run's last put is stored, so the call is refused as that put will be, first; a
// put refused because the thread moved before it landed is remembered by the saver, and the run's calls are refused.
import { ConflictError } from "../models/errors.js";
import { ownedCurrent, type SessionHandle } from "../sessions/langgraph-bridge.js";
import type { EntryRow, Step, Tx } from "../store/port/index.js";
import { refuseMovedParent, targetOf } from "./moved-parent.js";
import type { GuardedThread } from "./run-fork-guard.js";
import type { RunMark } from "./run-calls.js";
import { taskConfig } from "./task-config.js";
import { threadKey, type SaverParts } from "./saver-parts.js";

/**
 * Refuses (`SESSION_MOVED`, before anything is written or run) a call made in a node of a run of this saver's graph
 * on the thread's root namespace whose next put, going on from the run's last stored checkpoint, would be refused.
 * Outside a run, under durability "exit" (nothing of the run is stored until it ends), or where the run's last
 * checkpoint is not stored, nothing is refused here.
 */
export async function refuseMovedRun(parts: SaverParts, handle: SessionHandle, thread: GuardedThread): Promise<void> {
  const runAt = runCheckpointId(thread);
  if (runAt === undefined) return;
  // The run's puts made so far land first: its last one is then stored.
  const key = threadKey(thread.userId, thread.threadId, thread.ns);
  await parts.landing.settled(key);
  const stoppedAt = parts.stopped.peek(key);
  const ctx = await parts.engine();
  const run = parts.runs.runAt(taskConfig(thread));
  const stored = await ctx.store.read((tx) => movedRunUnit(tx, handle.id, thread, runAt, run));
  // Not stored: that put (or one before it, and LangGraph issued no more) was refused, the thread having moved before
  // it landed. Checkpoint ids are time-ordered; the refused one is this run's when no run of the thread started since.
  if (!stored && stoppedAt !== undefined && stoppedAt <= runAt) throw stoppedRun(thread);
}

/** Whether the run's last checkpoint is stored; refuses (`refuseMovedParent`) when its next put would be refused. */
function* movedRunUnit(tx: Tx, sessionId: string, guarded: GuardedThread, runAt: string, run: RunMark | undefined): Step<boolean> {
  const thread = yield* tx.langgraph.getThread(guarded.userId, guarded.threadId, guarded.ns);
  if (thread?.sessionId !== sessionId) return true;
  // Not stored: a run under "exit" (a tool's config does not always say so), or one whose put was refused.
  const row = yield* tx.langgraph.getCheckpoint(sessionId, runAt);
  if (!row) return false;
  const { branch: current } = yield* ownedCurrent(tx, sessionId, guarded.userId);
  const fp = (yield* tx.getCheckpoint(row.fpCheckpointId))!;
  const target = targetOf(fp);
  // The run's next put is a step of the run under way (LangGraph's `source: "loop"`) going on from this checkpoint.
  yield* refuseMovedParent(tx, sessionId, current, thread, target, true, run);
  // Another run of the thread put a checkpoint on the session's branch since (two runs at once): this run's next put
  // forks away from the head, which would undo a call journaled there now.
  if (yield* tx.langgraph.landedSince(sessionId, current.id, fp.seq)) throw overtakenRun(guarded);
  return true;
}

/**
 * In the unit that journals a call made in a node of such a run (the check above ran before it, in another): refuses
 * it (`SESSION_MOVED`, nothing written or run) when another run of the thread put a checkpoint on the call's branch
 * since the run's last one meanwhile. Journaled after that put, the call would stay at the head, beside a state
 * without its result, once this run's own put is refused. Under durability "exit" too, when the checkpoint the step
 * runs from is stored (a resume's first step).
 */
export function* refuseOvertakenCall(tx: Tx, sessionId: string, thread: GuardedThread, runAt: string, entry: EntryRow): Step<void> {
  const row = yield* tx.langgraph.getCheckpoint(sessionId, runAt);
  if (!row) return;
  const fp = yield* tx.getCheckpoint(row.fpCheckpointId);
  if (fp && (yield* tx.langgraph.landedSince(sessionId, entry.branchId, fp.seq))) throw overtakenRun(thread);
}

const overtakenRun = (thread: GuardedThread) =>
  new ConflictError(
    `thread ${thread.threadId}: another run of the thread put a checkpoint since this run's last one; ` +
      "the run is stopped: invoke the graph again to go on from where the session is now",
    "SESSION_MOVED",
  );

const stoppedRun = (thread: GuardedThread) =>
  new ConflictError(
    `thread ${thread.threadId}: its session moved before this run's last checkpoint landed; ` +
      "the run is stopped: invoke the graph again to go on from where the session is now",
    "SESSION_MOVED",
  );

/**
 * The id of the root graph's checkpoint the caller's step runs from, when the caller is a task (of the root graph or
 * of a subgraph) of a run of this saver's graph on the thread, under durability "async" or "sync": LangGraph's
 * `checkpoint_map` names it under the root namespace. Else undefined.
 */
function runCheckpointId(thread: GuardedThread): string | undefined {
  const config = taskConfig(thread);
  if (!config) return undefined;
  if (config.durability === "exit" || (config.durability == null && config.checkpointDuring === false)) return undefined;
  return stepCheckpointId(thread);
}

/** The id of the root graph's checkpoint the caller's step runs from (stored or not), whatever the run's durability. */
export function stepCheckpointId(thread: GuardedThread): string | undefined {
  const config = taskConfig(thread);
  if (!config || thread.ns !== "") return undefined;
  const map = config.configurable.checkpoint_map;
  const id = typeof map === "object" && map !== null ? (map as Record<string, unknown>)[""] : undefined;
  return typeof id === "string" ? id : undefined;
}
