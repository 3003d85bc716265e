// ForkpointSaver's list: a user's checkpoints matching a config and LangGraph's list options, newest first.
import type { RunnableConfig } from "@langchain/core/runnables";
import type { CheckpointListOptions, CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { ValidationError } from "../models/errors.js";
import type { LgListedRow, LgListFilter, LgThreadRow, LgWriteRow, Step, Tx } from "../store/port/index.js";
import type { CheckpointReader } from "./checkpoint-reader.js";
import { firstsAsked, pendingAtMovedHead, type Undone } from "./moved-head-writes.js";
import { firstAskedAt, withFirstAsked } from "./first-asked.js";
import { subgraphWaits, withSubgraphWaits } from "./namespace-head.js";
import { currentLineage, undoneById, type CurrentLineage } from "./served-writes.js";
import { assertReadNames, assertSaverKey, threadConfig, threadKey, userOf, type SaverParts } from "./saver-parts.js";
import { getTuple } from "./get-tuple.js";
import { memoryAboveNs, memoryParentNs } from "./subgraph-memory.js";
import { answeredOnLineage, resumedOffLineage, withLineageResumes } from "./resumed-aside.js";

/** The checkpoints `config` names (a thread, a namespace, one checkpoint), filtered on metadata, before and limit. */
export async function* listCheckpoints(
  parts: SaverParts,
  reader: CheckpointReader,
  config: RunnableConfig,
  options: CheckpointListOptions,
): AsyncGenerator<CheckpointTuple> {
  if (config === null || typeof config !== "object") throw new ValidationError("config", "must be a RunnableConfig object");
  if (options === null || typeof options !== "object") throw new ValidationError("options", "must be an object");
  if (options.limit !== undefined && (typeof options.limit !== "number" || !Number.isFinite(options.limit) || options.limit < 0)) {
    throw new ValidationError("limit", "must be a finite number, 0 or more");
  }
  const { threadId, ns, checkpointId } = threadConfig(config);
  assertReadNames({ threadId, ns, checkpointId });
  const before = options.before?.configurable?.checkpoint_id;
  if (typeof before === "string") assertSaverKey(before, "before.configurable.checkpoint_id");
  const userId = userOf(parts, config);
  const metadata = Object.entries(options.filter ?? {})
    .filter(([, v]) => v !== undefined)
    .map(([k, v]): [string, string] => [k, JSON.stringify(v)]);
  // A limit past any count is none: the stores bind a safe integer (neither takes one past 2^63).
  const limit = options.limit === undefined ? undefined : Math.min(options.limit, Number.MAX_SAFE_INTEGER);
  // LangGraph's time travel (`ReplayState`) reads a `checkpointer: true` subgraph's first checkpoint of the run as
  // the latest before the root graph's (at any depth): its memory as the parent's lineage keeps it, as its head is
  // (`subgraph-memory.ts`).
  const up = threadId !== undefined && checkpointId === undefined && before !== undefined ? memoryParentNs(ns ?? "") : undefined;
  if (up !== undefined && options.limit === 1 && metadata.length === 0) {
    for (const above of memoryAboveNs(ns ?? "")) await parts.landing.settled(threadKey(userId, threadId!, above));
    const ctx = await parts.engine();
    // Under durability "exit" the root's checkpoint named is its run's new one, not stored yet: the run travelled from
    // a checkpoint of the root's it read by id (`RunMark.travelledFrom`), whose lineage keeps the memory served.
    const from = parts.runs.runOf(config)?.travelledFrom;
    const bound = await ctx.store.read((tx) => isReplayBound(tx, userId, threadId!, up, before!));
    const rootAt = !bound && from !== undefined && from < before! ? from : undefined;
    if (bound || rootAt !== undefined) {
      const tuple = await getTuple(parts, reader, config, rootAt);
      // Served only when it is before that checkpoint, as a list's answer must be: else the list's own.
      if (tuple && tuple.checkpoint.id < before!) {
        yield tuple;
        return;
      }
    }
  }
  const ctx = await parts.engine();
  const { rows, undone, waits, firsts, swaps } = await ctx.store.read((tx) =>
    listUnit(tx, { userId, threadId, checkpointNs: ns, checkpointId, before, metadata, limit }),
  );
  // Checkpoints of one lineage share its verified history (`VerifiedItems`): read and verified once, not once each.
  for (const [i, row] of rows.entries()) {
    const tuple = await reader.tupleIfThere(ctx, { userId, threadId: row.threadId, checkpointNs: row.checkpointNs }, row, false);
    if (tuple?.pendingWrites && undone[i]) {
      tuple.pendingWrites = pendingAtMovedHead(tuple.pendingWrites, undone[i]);
      const asked = firsts.get(i);
      if (asked) tuple.pendingWrites = await withFirstAsked(parts.serde, tuple.pendingWrites, asked);
    }
    const served = waits.get(i);
    if (tuple?.pendingWrites && served && served.size > 0)
      tuple.pendingWrites = await withSubgraphWaits(parts.serde, tuple.pendingWrites, served);
    const resumed = swaps.get(i);
    if (tuple?.pendingWrites && resumed && resumed.size > 0)
      tuple.pendingWrites = await withLineageResumes(parts.serde, tuple.pendingWrites, resumed);
    if (tuple) yield tuple;
  }
}

/** Whether `checkpointId` is the root graph's checkpoint (as `ReplayState` names at any depth) or the parent's (`up`). */
function* isReplayBound(tx: Tx, userId: string, threadId: string, up: string, checkpointId: string): Step<boolean> {
  return (yield* isCheckpointOf(tx, userId, threadId, "", checkpointId)) || (yield* isCheckpointOf(tx, userId, threadId, up, checkpointId));
}

/** Whether `checkpointId` is a LangGraph checkpoint of the thread's namespace `ns`. */
function* isCheckpointOf(tx: Tx, userId: string, threadId: string, ns: string, checkpointId: string): Step<boolean> {
  const thread = yield* tx.langgraph.getThread(userId, threadId, ns);
  return thread !== undefined && (yield* tx.langgraph.getCheckpoint(thread.sessionId, checkpointId)) !== undefined;
}

/**
 * The listed rows, what each one's read by id leaves out of its pending writes (`undoneById`); for the thread's head,
 * the resume values its lineage gave (`resumedOffLineage`), and when a move took the thread there, the waits its
 * subgraphs are served at (`subgraphWaits`), by its index; for each with something left out, the first interrupts kept
 * there (`firstAskedAt`: its tasks ask those again, but for those given their lineage's answers back), as `getTuple`.
 */
function* listUnit(tx: Tx, filter: LgListFilter): Step<ListedRows> {
  const rows = yield* tx.langgraph.listCheckpoints(filter);
  // Each session's current lineage, read once for all its rows.
  const sessions = new Map<string, { thread: LgThreadRow; current: CurrentLineage } | null>();
  const undone: (Undone | null)[] = [];
  const waits = new Map<number, Map<string, LgWriteRow[]>>();
  const firsts = new Map<number, Map<string, LgWriteRow>>();
  const swaps = new Map<number, Map<string, LgWriteRow[]>>();
  for (const [i, row] of rows.entries()) {
    if (!sessions.has(row.sessionId)) {
      const thread = yield* tx.langgraph.threadOfSession(row.sessionId);
      sessions.set(row.sessionId, thread ? { thread, current: yield* currentLineage(tx, thread) } : null);
    }
    const of = sessions.get(row.sessionId);
    const left = of ? yield* undoneById(tx, of.thread, row, of.current) : null;
    undone.push(left);
    if (left) firsts.set(i, firstsAsked(yield* firstAskedAt(tx, row.sessionId, row.checkpointId), left));
    const served = of?.current.served;
    if (!of || served?.kind !== "stored" || served.row.checkpointId !== row.checkpointId) continue;
    if (served.moved === true) waits.set(i, yield* subgraphWaits(tx, of.thread.userId, of.thread.threadId, of.thread.checkpointNs, row));
    const resumed = yield* resumedOffLineage(tx, of.thread, row.checkpointId, left !== null);
    swaps.set(i, resumed);
    for (const taskId of firsts.get(i)?.keys() ?? []) if (answeredOnLineage(resumed.get(taskId))) firsts.get(i)!.delete(taskId);
  }
  return { rows, undone, waits, firsts, swaps };
}

interface ListedRows {
  rows: LgListedRow[];
  undone: (Undone | null)[];
  waits: Map<number, Map<string, LgWriteRow[]>>;
  firsts: Map<number, Map<string, LgWriteRow>>;
  swaps: Map<number, Map<string, LgWriteRow[]>>;
}
