// A graph node's tool call through `sessionFor` that would land on a lineage its run's own put then forks away from.
// Under `durability: "exit"` a run from an older checkpoint (time travel) puts nothing until it ends: its calls would
// be journaled at the session's head, and its one put then forks at that checkpoint, a move that undoes them. Such a
// call is refused before anything is written or run; under "async" or "sync" the run's puts land first.
import { ConflictError } from "../models/errors.js";
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  GENESIS_HASH,
  canonicalJson,
  entryAt,
  lastLineageMessage,
  ownedCurrent,
  toMessage,
  watchJournal,
  type SessionHandle,
} from "../sessions/langgraph-bridge.js";
import { refuseCallAfterOtherRun } from "./beside-run-call.js";
import { fromMessage } from "./messages.js";
import { refuseMovedRun, refuseOvertakenCall, stepCheckpointId } from "./moved-run-guard.js";
import { markRanOn } from "./ran-on.js";
import type { RunMark } from "./run-calls.js";
import { taskConfig } from "./task-config.js";
import { trimKey } from "./trimmed-list.js";
import { serializeItems, threadKey, type SaverParts } from "./saver-parts.js";
import type { EntryRow, Step, Tx } from "../store/port/index.js";

/** What names the thread a handle of `sessionFor` belongs to, and the saver it came from. */
export interface GuardedThread {
  saver: unknown;
  userId: string;
  threadId: string;
  ns: string;
}

/**
 * The handle (a fresh one, `fp.getSession`'s), its calls (`invoke`, `recordToolCall`) refused while a run of the
 * thread's graph would fork away from them, or will be stopped at its next put by a move of the thread
 * (`moved-run-guard.ts`). Own methods shadow the class's: the handle stays a `SessionHandle` itself (the adapters reach
 * its engine through it).
 */
export function guardRunCalls(parts: SaverParts, handle: SessionHandle, thread: GuardedThread): SessionHandle {
  for (const name of ["invoke", "recordToolCall"] as const) {
    const method = handle[name] as (...args: unknown[]) => Promise<unknown>;
    const guardedCall = async (...args: unknown[]): Promise<unknown> => {
      const at = await runBranch(parts, handle, thread);
      await refuseForkingRun(parts, handle, thread, at).catch((error: unknown) => {
        // Should the run fail, its one put at its end (under "exit") would still fork there, undoing the head's calls
        // for a run that did nothing: the put is refused then (`put-writes.ts`). A node that goes on past the
        // refusal (a `ToolNode` makes it a ToolMessage) forks there as time travel does.
        parts.runs.forkRefused(taskConfig(thread) as RunnableConfig | undefined);
        throw error;
      });
      await refuseMovedRun(parts, handle, thread);
      const call = () => method.apply(handle, at === undefined ? args : onBranch(args, name === "invoke" ? 2 : 1, at));
      // The run's own call, told from those of another run of the thread beside it (`run-calls.ts`).
      const config = taskConfig(thread);
      if (!config) return call();
      const task = config.configurable.__pregel_task_id;
      const context: RunCall = {
        parts,
        sessionId: handle.id,
        thread,
        runAt: stepCheckpointId(thread),
        run: parts.runs.runAt(config as RunnableConfig),
        task: typeof task === "string" ? task : undefined,
      };
      return watchJournal({ unit: journaledInRun, context }, call);
    };
    Object.defineProperty(handle, name, {
      value: async (...args: unknown[]) => {
        try {
          return await guardedCall(...args);
        } catch (error) {
          // A run from the thread's latest checkpoint whose call is refused cannot keep its own calls: it is stopped,
          // its later puts refused too, even when its node goes on past the refusal (a prebuilt `ToolNode` turns it
          // into a ToolMessage). A run from a checkpoint it addressed (time travel) forks there by design: it goes on.
          const config = taskConfig(thread) as RunnableConfig | undefined;
          if (error instanceof ConflictError && error.code === "SESSION_MOVED" && fromLatest(config)) parts.runs.stop(config);
          throw error;
        }
      },
      configurable: true,
      writable: true,
    });
  }
  return handle;
}

/** Whether the task's run is one LangGraph started from the thread's latest checkpoint (it addressed none). */
function fromLatest(config: RunnableConfig | undefined): boolean {
  const metadata = config?.metadata as Record<string, unknown> | undefined;
  return metadata?.thread_id != null && metadata.checkpoint_id == null;
}

/** A call made in a node of a run of this saver's graph on the thread: what its journal unit checks and notes. */
interface RunCall {
  parts: SaverParts;
  sessionId: string;
  thread: GuardedThread;
  /** The root graph's checkpoint the call's step runs from. */
  runAt: string | undefined;
  run: RunMark | undefined;
  task: string | undefined;
}

/**
 * In the unit journaling the call: refused once another run of the thread put a checkpoint since the step's
 * (`refuseOvertakenCall`) or made a call since it (`refuseCallAfterOtherRun`), else noted as the run's own
 * (`run-calls.ts`).
 */
function* journaledInRun(tx: Tx, entry: EntryRow, call: RunCall): Step<void> {
  if (call.runAt !== undefined) yield* refuseOvertakenCall(tx, call.sessionId, call.thread, call.runAt, entry);
  if (!call.run) return;
  if (call.runAt !== undefined) yield* refuseCallAfterOtherRun(tx, call.parts, call.sessionId, call.thread, call.runAt, entry, call.run);
  call.parts.runs.journaled(call.sessionId, entry.id, call.run, call.task);
  yield* markRanOn(tx, call.sessionId, entry.branchId, call.run.id);
}

/**
 * The session's current branch as a call made inside a node of a run of this saver's graph begins (the run's puts so
 * far landed): the checks above read the database before the call's own transaction, so the call is made on this
 * branch only (`ifAt`), and a move landing in between refuses it too. Outside a run, undefined.
 */
async function runBranch(parts: SaverParts, handle: SessionHandle, thread: GuardedThread): Promise<string | undefined> {
  if (!taskConfig(thread)) return undefined;
  await parts.landing.settled(threadKey(thread.userId, thread.threadId, thread.ns));
  const ctx = await parts.engine();
  return ctx.store.read((tx) => currentBranchUnit(tx, handle.id, thread.userId));
}

function* currentBranchUnit(tx: Tx, sessionId: string, userId: string) {
  return (yield* ownedCurrent(tx, sessionId, userId)).branch.id;
}

/** The call's arguments with `ifAt: { branchId }` in its options, unless they say where it lands (`ifAt`, `after`). */
function onBranch(args: unknown[], at: number, branchId: string): unknown[] {
  const options = args[at] ?? {};
  if (typeof options !== "object" || options === null || "ifAt" in options || "after" in options) return args;
  const out = [...args];
  out[at] = { ...options, ifAt: { branchId } };
  return out;
}

/**
 * Refuses (`SESSION_MOVED`) a call made inside a node of a run of this saver's graph on this thread whose messages do
 * not go on from the session's head: the run started from an older checkpoint, and none of its puts has landed (they
 * are waited for first), so its put will fork and undo what lands at the head now. Outside a run, or where the run's
 * messages cannot be read, nothing is refused.
 */
async function refuseForkingRun(parts: SaverParts, handle: SessionHandle, thread: GuardedThread, at: string | undefined): Promise<void> {
  if (inTimeTravelingSubgraph(thread)) throw forkingRunRefusal(thread);
  if (movedUnderExit(parts, thread, at)) throw movedExitRefusal(thread);
  if (await overtakenUnderExit(parts, handle, thread, at)) throw overtakenExitRefusal(thread);
  if (await subgraphTravelledAway(parts, handle, thread)) throw forkingRunRefusal(thread);
  const list = runMessages(parts, thread);
  if (list === undefined) return;
  await parts.landing.settled(threadKey(thread.userId, thread.threadId, thread.ns));
  const ctx = await parts.engine();
  const head = await ctx.store.read((tx) => sessionHeadUnit(tx, handle.id, thread.userId));
  if (head.count === 0) return;
  if (head.last === undefined) throw forkingRunRefusal(thread);
  const last = fromMessage(toMessage(head.last));
  if (list.length >= head.count) {
    const [item] = await serializeItems(parts, [list[head.count - 1]]).catch(() => [undefined]);
    if (item !== undefined && canonicalJson(last) === canonicalJson(item)) return;
  }
  // A run whose graph trims its messages (`trimmed-list.ts`) holds the session's last message further up its list.
  const key = trimKey(last);
  for (let i = Math.min(list.length, head.count) - 1; i >= 0; i--) {
    const [item] = await serializeItems(parts, [list[i]]).catch(() => [undefined]);
    if (item !== undefined && trimKey(item) === key) return;
  }
  throw forkingRunRefusal(thread);
}

/**
 * Whether the caller's run is under durability "exit" (nothing of it is stored before it ends) and the session of the
 * thread's root graph is now on another branch (`at`) than the one the run read the thread's head on: a move (by any
 * server: a rollback, another server's time travel) left the run behind, and its one put forks away from a call
 * journaled now (or is refused, the call staying beside a state without its result).
 */
function movedUnderExit(parts: SaverParts, thread: GuardedThread, at: string | undefined): boolean {
  const config = taskConfig(thread);
  if (at === undefined || thread.ns !== "" || config?.durability !== "exit") return false;
  const run = parts.runs.runAt(config as RunnableConfig);
  return run?.readOn !== undefined && run.readOn !== at;
}

/**
 * Whether the caller is a node of a subgraph in a run of this saver's graph on the thread's root namespace that
 * travelled to an older checkpoint of the root's (a `Command` resume from `getStateHistory`) and put nothing yet,
 * while the root's session stands elsewhere (not at that checkpoint, or past it with messages): the run's first put
 * forks there, after this call, which would land at the head and be undone. A subgraph's task cannot read the root's
 * messages (`runMessages`), so the checkpoint tells.
 */
async function subgraphTravelledAway(parts: SaverParts, handle: SessionHandle, thread: GuardedThread): Promise<boolean> {
  const config = taskConfig(thread);
  const taskNs = config?.configurable.checkpoint_ns;
  if (thread.ns !== "" || typeof taskNs !== "string" || !taskNs.includes("|")) return false;
  const from = parts.runs.runAt(config as RunnableConfig)?.travelledFrom;
  if (from === undefined) return false;
  const ctx = await parts.engine();
  return ctx.store.read((tx) => travelledAwayUnit(tx, handle.id, thread.userId, from));
}

function* travelledAwayUnit(tx: Tx, sessionId: string, userId: string, checkpointId: string): Step<boolean> {
  const row = yield* tx.langgraph.getCheckpoint(sessionId, checkpointId);
  const fp = row ? yield* tx.getCheckpoint(row.fpCheckpointId) : undefined;
  if (!fp) return false;
  const { branch, head } = yield* ownedCurrent(tx, sessionId, userId);
  const at = yield* entryAt(tx, branch, fp.position);
  return (at?.hash ?? GENESIS_HASH) !== fp.headHash || (at?.msgCount ?? 0) !== head.msgCount;
}

/**
 * Whether the caller's run is under durability "exit" and another run of the thread put a LangGraph checkpoint on the
 * branch since the one this run's first read of the thread's head was served (two runs of the thread at once): this
 * run's one put forks before that run's step, so a call journaled now, after it, would be undone.
 */
async function overtakenUnderExit(
  parts: SaverParts,
  handle: SessionHandle,
  thread: GuardedThread,
  at: string | undefined,
): Promise<boolean> {
  const config = taskConfig(thread);
  if (at === undefined || thread.ns !== "" || config?.durability !== "exit") return false;
  const seq = parts.runs.runAt(config as RunnableConfig)?.readSeq;
  if (seq === undefined) return false;
  const ctx = await parts.engine();
  return ctx.store.read((tx) => tx.langgraph.landedSince(handle.id, at, seq));
}

const overtakenExitRefusal = (thread: GuardedThread) =>
  new ConflictError(
    `thread ${thread.threadId}: another run of the thread put a checkpoint since this run read the thread (under ` +
      'durability "exit" the run puts nothing before it ends, and its put would fork away from this call): the run is ' +
      "stopped: invoke the graph again to go on from where the session is now",
    "SESSION_MOVED",
  );

const movedExitRefusal = (thread: GuardedThread) =>
  new ConflictError(
    `thread ${thread.threadId}: its session moved since this run read the thread (under durability "exit" the run ` +
      "puts nothing before it ends, and its put would fork away from this call): the run is stopped: invoke the graph " +
      "again to go on from where the session is now",
    "SESSION_MOVED",
  );

/**
 * The refusal of a call in a run whose put forks away from it, with what the caller can do: under "exit" nothing is
 * put before the run ends (another durability helps a run with input: its input's put lands first); under "async" or
 * "sync" the call came before the run's first put (a run from that checkpoint without input: a resume, a retry), so
 * another durability would not help. Either way a rollback to that checkpoint first does. A tool of a `ToolNode` is
 * not handed the run's durability: its refusal says both.
 */
const forkingRunRefusal = (thread: GuardedThread) => {
  const durability = taskConfig(thread)?.durability;
  const exit =
    'under durability "exit" a run from an older checkpoint (time travel) puts nothing before it ends: a run with ' +
    'input can go on under durability "async" or "sync" (its input\'s put forks first, and its calls follow it)';
  const first = "a call comes before the run's first put (a run from that checkpoint without input: a resume, a retry)";
  const why =
    durability === "exit"
      ? exit
      : durability === "async" || durability === "sync"
        ? `under durability "${durability}" ${first}`
        : `${exit}; under "async" or "sync" ${first}`;
  return new ConflictError(
    `thread ${thread.threadId}: this run goes on from an older checkpoint than the session's head, and its put, which ` +
      `forks there, has not landed: a call recorded now would be undone by that fork (${why}). Any run can go ` +
      "on once you roll the thread's session back to that checkpoint (rollback to the forkpoint checkpoint whose " +
      "metadata.langgraph.checkpointId names it) and invoke from the thread",
    "SESSION_MOVED",
  );
};

/**
 * Whether the caller is a node of a subgraph, in a run of this saver's graph on the thread's root namespace under
 * durability "exit" that LangGraph itself runs as time travel (it addressed a checkpoint other than the thread's
 * latest: it hands its subgraphs a replay state). That run's one put forks at the addressed checkpoint; the subgraph's
 * tasks cannot read the root graph's messages, so the replay state is what tells.
 */
function inTimeTravelingSubgraph(thread: GuardedThread): boolean {
  const config = taskConfig(thread);
  if (!config) return false;
  const { configurable } = config;
  const taskNs = configurable.checkpoint_ns;
  if (thread.ns !== "" || typeof taskNs !== "string" || !taskNs.includes("|") || config.durability !== "exit") return false;
  const replay = configurable.__pregel_replay_state as { checkpointId?: unknown } | undefined;
  return typeof replay === "object" && replay !== null && typeof replay.checkpointId === "string";
}

/**
 * The messages channel of the run the caller runs in, when it is a node of this saver's graph on the thread's root
 * namespace (LangGraph's config of the running task, its `__pregel_read` of the step's channels); else undefined.
 */
function runMessages(parts: SaverParts, thread: GuardedThread): unknown[] | undefined {
  const configurable = taskConfig(thread)?.configurable;
  if (!configurable) return undefined;
  // A task of the root graph has the namespace "node:task"; a subgraph's has more parts ("a:1|b:2").
  const taskNs = configurable.checkpoint_ns;
  if (thread.ns !== "" || typeof taskNs !== "string" || taskNs.includes("|")) return undefined;
  const read = configurable.__pregel_read;
  if (typeof read !== "function") return undefined;
  try {
    const list: unknown = (read as (select: string, fresh?: boolean) => unknown)(parts.messages, false);
    return Array.isArray(list) ? list : undefined;
  } catch {
    return undefined;
  }
}

/** The session's message count and its current lineage's last message (none when it has no message). */
function* sessionHeadUnit(tx: Tx, sessionId: string, userId: string) {
  const { branch, head } = yield* ownedCurrent(tx, sessionId, userId);
  const last = head.msgCount === 0 ? undefined : yield* lastLineageMessage(tx, branch.id);
  return { count: head.msgCount, last };
}
