// The refusals (`SESSION_MOVED`) of a LangGraph put whose run was overtaken: moved, appended to, or left behind.
import { ConflictError } from "../models/errors.js";
import type { BranchRow, LgThreadRow, MoveHistoryRow, Step, Tx } from "../store/port/index.js";
import { GENESIS_HASH, entryAt, headOf } from "../sessions/langgraph-bridge.js";
import type { RunMark } from "./run-calls.js";
import { forkedBySaver, turnedSince } from "./saver-fork.js";

/** The point a put goes on from, and the forkpoint checkpoint there, if the parent is stored (null: synthesized). */
export interface Target {
  fpCheckpointId: string | null;
  branchId: string;
  position: number;
  headHash: string;
  /**
   * For a step of a run under way: its parent's branch's head, when only tool calls and state changes follow the
   * parent there (the step's own, journaled by its nodes). A fork the put needs goes on from there.
   */
  after?: { position: number; headHash: string };
}

export const targetOf = (cp: { id: string; branchId: string; position: number; headHash: string }): Target => ({
  fpCheckpointId: cp.id,
  branchId: cp.branchId,
  position: cp.position,
  headHash: cp.headHash,
});

/**
 * The refusals (`SESSION_MOVED`) of a put going on from `target` (its parent, off the empty start) while the session
 * is on `current`: one that would fork from where a move left the session, and, for a step of a run under way or the
 * input of a run from the thread's head (`continuing`), one overtaken by moves or by messages another writer added
 * since its parent.
 */
export function* refuseMovedParent(
  tx: Tx,
  sessionId: string,
  current: BranchRow,
  thread: LgThreadRow,
  target: Target,
  continuing: boolean,
  run?: RunMark,
): Step<void> {
  if (target.branchId !== current.id) {
    yield* refuseLeftBehind(tx, sessionId, thread, target, continuing, run);
    if (continuing) yield* refuseOvertaken(tx, sessionId, current, thread, target, run);
  } else if (continuing) yield* refuseAppended(tx, sessionId, current, thread, target);
}

/**
 * A step of a run under way whose parent (the run's last checkpoint) is off the session's current branch, while no
 * LangGraph checkpoint has landed on that branch since: the session was moved by something other than a LangGraph run
 * (any number of rollbacks, switches, edits, undos or redos, by any server), which a fork from that parent would
 * silently undo. Refused as `refuseLeftBehind` refuses a run overtaken by one move. A saver's fork (or a run going on
 * from it) lands a checkpoint on its branch, so runs forking side by side are not refused. Nor is a run's first put
 * from the checkpoint it travelled to, under durability "exit" (its one put is a step's): the session moved before the
 * run started, on the branch it still is on (`travelledBefore`).
 */
function* refuseOvertaken(tx: Tx, sessionId: string, current: BranchRow, thread: LgThreadRow, target: Target, run?: RunMark): Step<void> {
  if (target.fpCheckpointId === null) return;
  if (yield* travelledBefore(tx, sessionId, current, target, run)) return;
  // The session is where the run left off (a branch forked right at it, with nothing of its own yet).
  const head = yield* headOf(tx, current);
  if (head.hash === target.headHash) return;
  // Or it is, with tool calls and state changes since: the step's own (a node journaling through the thread's session).
  const at = yield* entryAt(tx, current, target.position);
  if ((at?.hash ?? GENESIS_HASH) === target.headHash && (at?.msgCount ?? 0) === head.msgCount) return;
  const parent = yield* tx.getCheckpoint(target.fpCheckpointId);
  if (!parent || (yield* tx.langgraph.landedSince(sessionId, current.id, parent.seq))) return;
  throw runStopped(thread, "its session moved");
}

/**
 * Whether `target` is the checkpoint `run` travelled to (time travel: its first read of the root's thread named it, and
 * none of its puts landed yet), while the session stands on the branch the run's read of the thread's head was served
 * on: whatever moved the session there came before the run, whose put forks from the checkpoint it was asked to.
 */
function* travelledBefore(tx: Tx, sessionId: string, current: BranchRow, target: Target, run?: RunMark): Step<boolean> {
  if (run?.travelledFrom === undefined || run.readOn !== current.id) return false;
  const travelled = yield* tx.langgraph.getCheckpoint(sessionId, run.travelledFrom);
  return travelled?.fpCheckpointId === target.fpCheckpointId;
}

/**
 * A step of a run under way whose parent (the run's last checkpoint) is on the session's current branch, with messages
 * after it behind which no LangGraph checkpoint has landed: another writer (an app server's append, a user's message)
 * added them while the run was in flight. A fork from the parent would silently take them out of the conversation, so
 * the run stops as one overtaken by a move does. Tool calls and state changes after the parent are the step's own (a
 * node journaling through the thread's session): the put goes on after them.
 */
function* refuseAppended(tx: Tx, sessionId: string, current: BranchRow, thread: LgThreadRow, target: Target): Step<void> {
  const head = yield* headOf(tx, current);
  if (head.position <= target.position) return;
  const at = yield* entryAt(tx, current, target.position);
  if ((at?.hash ?? GENESIS_HASH) !== target.headHash || (at?.msgCount ?? 0) === head.msgCount) return;
  // A synthesized parent (the head a run from the thread read, after messages the app appended) has no checkpoint:
  // a LangGraph checkpoint landed after its point is one landed since.
  const parent = target.fpCheckpointId === null ? null : yield* tx.getCheckpoint(target.fpCheckpointId);
  if (target.fpCheckpointId !== null && !parent) return;
  const landed = parent
    ? yield* tx.langgraph.landedSince(sessionId, current.id, parent.seq)
    : yield* tx.langgraph.landedOnBranch(sessionId, current.id, target.position + 1);
  if (landed) return;
  throw runStopped(thread, "messages were added to its session");
}

/**
 * A run already under way when the session moved (a rollback, switch or edit, by any server) would put its next
 * checkpoint as a fork from its own last one, making that fork current: the move would silently be undone. Such a
 * put goes on from exactly where the session's latest move departed, so it is refused, as the AI SDK's loop is: the
 * run stops with `SESSION_MOVED` and the session stays where it was moved, whatever landed on the move's branch since
 * (a LangGraph turn there is one more thing the fork would undo). A saver's own fork is not such a move: it makes a
 * branch and lands a LangGraph checkpoint on it in one transaction, marked (`saver-fork.ts`), so two runs forking side
 * by side both finish. A move departing after a step's own calls (made while a node waits) leaves its run behind as
 * one departing from its parent does. Going on from the point left behind on purpose is a `switchBranch` back to
 * it first.
 */
function* refuseLeftBehind(tx: Tx, sessionId: string, thread: LgThreadRow, target: Target, continuing: boolean, run?: RunMark): Step<void> {
  const latest = yield* latestDeparture(tx, sessionId);
  if (continuing && (!latest || latest.fromBranchId !== target.branchId)) {
    yield* refuseLeftEarlier(tx, sessionId, thread, target, latest, run);
    return;
  }
  if (!latest || latest.fromBranchId !== target.branchId) return;
  if (latest.fromPosition !== target.position && !(continuing && (yield* departedAfterStepCalls(tx, sessionId, latest, target)))) return;
  // A run that read the thread's head on the branch the move made went on from that head (a rollback to a user's
  // checkpoint at the point the session was at, whose step the head still reads): it started after the move.
  if (run?.readOn !== undefined && run.readOn === latest.toBranchId && latest.kind !== "switch") return;
  // A saver's fork is told by its mark; a put that is no step of a run under way (time travel from a checkpoint left
  // behind) forks as before once any LangGraph checkpoint landed on the move's branch.
  if (latest.kind === "switch") throw runStopped(thread, `its session moved (${latest.kind})`);
  const bySaver = continuing && (yield* forkedBySaver(tx, sessionId, latest.toBranchId));
  const forked = continuing
    ? bySaver && !(yield* turnedSince(tx, sessionId, latest.toBranchId))
    : yield* tx.langgraph.landedOnBranch(sessionId, latest.toBranchId, latest.toPosition);
  if (forked) return;
  throw runStopped(thread, bySaver ? TURNED_FORK : `its session moved (${latest.kind})`);
}

/**
 * A step of a run under way left behind by a move that is not the session's latest: the moves standing above the one
 * that departed from where the run is (`latest` down to it) or, when none did, the undo of the move that took the
 * session to the run's branch. Any of them by a user (a switch, or a branch that is no saver's fork: `forkedBySaver`)
 * is one a fork from the run's parent would silently undo, with whatever landed since, so the run stops as one left
 * behind by the latest move does. Moves that are all saver forks let it go on (runs forking side by side). The walk
 * stops at a move to the run's branch: the moves below it came before the run was there.
 */
function* refuseLeftEarlier(
  tx: Tx,
  sessionId: string,
  thread: LgThreadRow,
  target: Target,
  latest: MoveHistoryRow | undefined,
  run?: RunMark,
): Step<void> {
  const above: MoveHistoryRow[] = [];
  let departure: MoveHistoryRow | undefined;
  for (let move = latest; move; move = move.prev === null ? undefined : yield* tx.historyMove(move.prev)) {
    if (move.toBranchId === move.fromBranchId && move.toPosition === move.fromPosition) continue;
    if (move.fromBranchId === target.branchId) {
      departure = move;
      break;
    }
    if (move.toBranchId === target.branchId) break;
    above.push(move);
  }
  if (departure) {
    if (departure.fromPosition !== target.position && !(yield* departedAfterStepCalls(tx, sessionId, departure, target))) return;
    const chain = [departure, ...above];
    // A run that read the thread's head on a branch one of them made started after it (see `refuseLeftBehind`).
    if (chain.some((m) => m.kind !== "switch" && m.toBranchId === run?.readOn)) return;
    for (const move of chain) {
      if (move.kind === "switch" || !(yield* forkedBySaver(tx, sessionId, move.toBranchId))) {
        throw runStopped(thread, `its session moved (${move.kind})`);
      }
      if (yield* turnedSince(tx, sessionId, move.toBranchId)) throw runStopped(thread, TURNED_FORK);
    }
    return;
  }
  if (above.length > 0) return;
  // No standing move since the run was on its branch: an undo took the session off it, from where the run is.
  const undone = yield* tx.moveToRedo(sessionId);
  if (!undone || undone.toBranchId !== target.branchId || undone.fromBranchId === target.branchId) return;
  if (yield* wentOnPast(tx, sessionId, target)) return;
  throw runStopped(thread, `its session moved (undo of a ${undone.kind})`);
}

/**
 * Whether `target`'s branch went on past a step's parent with more than the step's own tool calls and state changes:
 * messages, or a LangGraph checkpoint of another run (which went on first).
 */
function* wentOnPast(tx: Tx, sessionId: string, target: Target): Step<boolean> {
  if (target.fpCheckpointId === null) return true;
  const branch = yield* tx.getBranch(target.branchId);
  const parent = yield* tx.getCheckpoint(target.fpCheckpointId);
  if (!branch || !parent) return true;
  const head = yield* headOf(tx, branch);
  const at = yield* entryAt(tx, branch, target.position);
  if ((at?.hash ?? GENESIS_HASH) !== target.headHash || (at?.msgCount ?? 0) !== head.msgCount) return true;
  return yield* tx.langgraph.landedSince(sessionId, branch.id, parent.seq);
}

/**
 * Whether `move` (off `target`'s branch) departed after the parent of a step of a run under way, after tool calls and
 * state changes only (the step's nodes journal theirs after its parent's put, and a move made while one waits departs
 * after them), with no LangGraph checkpoint stored after the parent's there (another run's, which went on first).
 */
function* departedAfterStepCalls(tx: Tx, sessionId: string, move: MoveHistoryRow, target: Target): Step<boolean> {
  if (move.fromPosition < target.position) return false;
  const branch = yield* tx.getBranch(target.branchId);
  if (!branch) return false;
  const at = yield* entryAt(tx, branch, target.position);
  const from = yield* entryAt(tx, branch, move.fromPosition);
  if ((at?.hash ?? GENESIS_HASH) !== target.headHash || (at?.msgCount ?? 0) !== (from?.msgCount ?? 0)) return false;
  const parent = target.fpCheckpointId === null ? undefined : yield* tx.getCheckpoint(target.fpCheckpointId);
  if (target.fpCheckpointId !== null && !parent) return false;
  const first = target.fpCheckpointId === null ? target.position + 1 : target.position;
  return (yield* tx.langgraph.firstLandedSince(sessionId, branch.id, parent?.seq ?? -1, first, move.fromPosition)) === undefined;
}

/** The newest standing move that left where the session was: moves that stayed (see `recordStay`) left nothing behind. */
function* latestDeparture(tx: Tx, sessionId: string): Step<MoveHistoryRow | undefined> {
  let move = yield* tx.moveToUndo(sessionId);
  while (move && move.toBranchId === move.fromBranchId && move.toPosition === move.fromPosition)
    move = move.prev === null ? undefined : yield* tx.historyMove(move.prev);
  return move;
}

/** What moved the session when another run's time travel (a saver's fork) left the run and a later turn followed it. */
const TURNED_FORK = "another run's time travel forked its session, and a later turn went on from that fork,";

/** The refusal of a run's put that would fork from where a move left it. */
export const runStopped = (thread: LgThreadRow, moved: string) =>
  new ConflictError(
    `thread ${thread.threadId}: ${moved} since this run's last checkpoint, which it would fork from; ` +
      "the run is stopped: invoke the graph again to go on from where the session is now",
    "SESSION_MOVED",
  );
