// ForkpointSaver's getTuple: the checkpoint a config names (stored, or synthesized at a point), or the thread's head.
import type { RunnableConfig } from "@langchain/core/runnables";
import type { CheckpointTuple } from "@langchain/langgraph-checkpoint";
import { ConflictError, ValidationError } from "../models/errors.js";
import type { LgThreadRow, Step, Tx } from "../store/port/index.js";
import { servedAfterMoves, currentToServe, ownedCurrent, ownedSession, type EngineContext } from "../sessions/langgraph-bridge.js";
import type { CheckpointReader } from "./checkpoint-reader.js";
import { assertReadNames, threadConfig, threadKey, userOf, type SaverParts } from "./saver-parts.js";
import { callsUndone, firstsAsked, pendingAtMovedHead } from "./moved-head-writes.js";
import { firstAskedAt, withFirstAsked } from "./first-asked.js";
import { subgraphWaits, throughParent, withSubgraphWaits } from "./namespace-head.js";
import { currentLineage, undoneAt, undoneById } from "./served-writes.js";
import { memoryAboveNs, memoryOnParentLineage, memoryParentNs } from "./subgraph-memory.js";
import { checkpointAt, resolveSynthesized, type PointCheckpoint } from "./thread-head.js";
import { answeredOnLineage, resumedOffLineage, withLineageResumes } from "./resumed-aside.js";
import { refuseStoppedMove } from "./stopped-move.js";
import { servedWritten, subgraphStepBranch, writtenAt } from "./written-on.js";
import { travelledStepEnd } from "./travelled-step.js";

/**
 * A checkpoint of a thread: the one `checkpoint_id` names (stored, or synthesized at a point), or without one the
 * thread's head, which is its session's current position (`thread-head.ts`): a forkpoint move or append on the
 * session is what the graph goes on from.
 */
export async function getTuple(
  parts: SaverParts,
  reader: CheckpointReader,
  config: RunnableConfig,
  rootAt?: string,
): Promise<CheckpointTuple | undefined> {
  if (config === null || typeof config !== "object") throw new ValidationError("config", "must be a RunnableConfig object");
  const { threadId, ns = "", checkpointId } = threadConfig(config);
  if (threadId === undefined) return undefined;
  assertReadNames({ threadId, ns, checkpointId });
  const userId = userOf(parts, config);
  // A run's loop reads its thread first: its calls are told from those of runs beside it from here (`run-calls.ts`).
  parts.runs.started(config);
  // A run of the thread starts here (LangGraph reads the thread first): a run stopped before it is no longer its latest.
  if (checkpointId === undefined) parts.stopped.delete(threadKey(userId, threadId, ns));
  // A `checkpointer: true` subgraph's memory follows its parent's lineage (the root's, through a plain subgraph): the
  // puts so far of the graphs above it land first.
  for (const above of checkpointId === undefined ? memoryAboveNs(ns) : []) await parts.landing.settled(threadKey(userId, threadId, above));
  const ctx = await parts.engine();
  // In a run from an older checkpoint of the root's (a `Command` resume from `getStateHistory`), such a subgraph's
  // memory is what the root's lineage keeps at that step's end, not at the session's head: the run's put moves the
  // session there only as it lands, and the step run again must not see the later steps' answers that put undoes.
  const travelled = checkpointId === undefined && memoryParentNs(ns) !== undefined ? parts.runs.runOf(config)?.travelledFrom : undefined;
  const weighAt = rootAt ?? (travelled && (await ctx.store.read((tx) => travelledStepEnd(tx, userId, threadId, travelled))));
  const found = await readPlace(ctx, userId, threadId, ns, checkpointId, weighAt);
  if (!found) return undefined;
  parts.sessions.set(threadKey(userId, threadId, ns), found.thread.sessionId, 1);
  if (found.readOn !== undefined) parts.runs.readOn(config, found.readOn, found.readSeq);
  const tuple = await reader.pointTuple(ctx, found.thread, found.at, true);
  const all = tuple?.pendingWrites;
  if (tuple?.pendingWrites && found.undone) tuple.pendingWrites = pendingAtMovedHead(tuple.pendingWrites, found.undone);
  // Results stored by a run a move undid or left are not served; those of a task run again since the move are.
  if (all && tuple?.pendingWrites && found.written)
    tuple.pendingWrites = await servedWritten(parts.serde, all, tuple.pendingWrites, found.written);
  if (tuple?.pendingWrites && found.undone && found.firsts)
    tuple.pendingWrites = await withFirstAsked(parts.serde, tuple.pendingWrites, found.firsts);
  if (tuple?.pendingWrites && found.waits && found.waits.size > 0)
    tuple.pendingWrites = await withSubgraphWaits(parts.serde, tuple.pendingWrites, found.waits);
  if (tuple?.pendingWrites && found.swaps && found.swaps.size > 0)
    tuple.pendingWrites = await withLineageResumes(parts.serde, tuple.pendingWrites, found.swaps);
  // A step another run of the thread went on from since this run started (two resumes of one wait at once): this
  // run's put forks away from that run's calls, so it would show results whose calls it undoes.
  if (tuple && parts.runs.servedBeside(config, tuple.checkpoint.id, tuple.pendingWrites ?? [])) {
    parts.runs.stop(config);
    throw wentOnBeside(threadId);
  }
  parts.runs.served(config, tuple?.pendingWrites);
  parts.runs.goesOnFrom(config, tuple?.checkpoint.id);
  if (ns === "") parts.runs.readRoot(config, checkpointId, tuple?.checkpoint.id);
  return tuple;
}

const wentOnBeside = (threadId: string) =>
  new ConflictError(
    `thread ${threadId}: another run of the thread went on from this step since this run started (two runs at ` +
      "once); the run is stopped: invoke the graph again to go on from where the session is now",
    "SESSION_MOVED",
  );

/**
 * The thread and the checkpoint a read names, and what a move left of it when it is a head the session was moved to. A
 * read of the head is what a run is served: a move of the session stopped midway (its process killed) is finished
 * first (`servedAfterMoves`), as the run's first put would finish it, so the run goes on from where the move ends.
 */
export function readPlace(
  ctx: EngineContext,
  userId: string,
  threadId: string,
  ns: string,
  checkpointId: string | undefined,
  rootAt?: string,
) {
  // The session is known once the unit read the thread; a refusal (a stopped move) comes after that.
  const ref = { id: "" };
  return servedAfterMoves(ctx, ref, () =>
    ctx.store.read((tx) => placeWithFirsts(ctx, tx, ref, userId, threadId, ns, checkpointId, rootAt)),
  );
}

/**
 * `placeUnit`, with the first interrupts kept at the checkpoint (`firstAskedAt`) when its resume values are not served
 * (something is undone there): its tasks ask their first questions again, and show them.
 */
function* placeWithFirsts(
  ctx: EngineContext,
  tx: Tx,
  ref: { id: string },
  userId: string,
  threadId: string,
  ns: string,
  checkpointId: string | undefined,
  rootAt?: string,
) {
  const found = yield* placeUnit(ctx, tx, ref, userId, threadId, ns, checkpointId, rootAt);
  // A checkpoint serves the resume values its lineage gave, not another branch's written over them (`resumed-aside.ts`).
  const swaps =
    found?.at.kind === "stored" ? yield* resumedOffLineage(tx, found.thread, found.at.row.checkpointId, !!found.undone) : undefined;
  // A task given its lineage's answers back runs on from them: it shows the question it asked after them.
  const firsts =
    found?.undone && found.at.kind === "stored"
      ? firstsAsked(yield* firstAskedAt(tx, found.thread.sessionId, found.at.row.checkpointId), found.undone)
      : undefined;
  for (const taskId of firsts?.keys() ?? []) if (answeredOnLineage(swaps?.get(taskId))) firsts!.delete(taskId);
  // The branch the step ran on first tells a task run again since a move (`writtenAt`): the root's own checkpoint's, or
  // for a subgraph's head served through its parent's moved head, the root step's (`subgraphStepBranch`).
  const stepBranch =
    found?.at.kind !== "stored"
      ? undefined
      : ns === ""
        ? (yield* tx.langgraph.pointOf(found.thread.sessionId, found.at.row.checkpointId))?.branchId
        : found.undone && checkpointId === undefined
          ? yield* subgraphStepBranch(tx, userId, threadId)
          : undefined;
  // Moved to a checkpoint whose step's calls stand (the graph went on from it, or it was resumed since): a task's
  // results the lineage holds were its own run's (`writtenAt`).
  const written =
    found?.at.kind === "stored"
      ? yield* writtenAt(tx, found.thread, found.at.row.checkpointId, stepBranch, !!found.undone && !callsUndone(found.undone))
      : undefined;
  // The branch a read of the root graph's head is served on: a run reading it goes on from there (`RunMark.readOn`).
  const readOn =
    found && checkpointId === undefined && ns === "" ? (yield* tx.getSession(found.thread.sessionId))?.currentBranchId : undefined;
  // And the seq of the stored checkpoint it was served (`RunMark.readSeq`).
  const readSeq =
    readOn !== undefined && found?.at.kind === "stored" ? (yield* tx.getCheckpoint(found.at.row.fpCheckpointId))?.seq : undefined;
  return found && { ...found, firsts, written, swaps, readOn, readSeq };
}

function* placeUnit(
  ctx: EngineContext,
  tx: Tx,
  ref: { id: string },
  userId: string,
  threadId: string,
  ns: string,
  checkpointId: string | undefined,
  rootAt?: string,
) {
  const thread = yield* tx.langgraph.getThread(userId, threadId, ns);
  if (thread) ref.id = thread.sessionId;
  // The thread's head, while a move of its session stopped having undone calls the head's results came from.
  if (thread && ns === "" && checkpointId === undefined) yield* refuseStoppedMove(tx, thread.sessionId, threadId);
  // The root's checkpoint a run travelled from, its memory subgraphs served as its lineage there keeps them (not where
  // the root's session stands: the run's put moves it there only as it lands, `RunMark.travelledFrom`).
  const root = rootAt === undefined ? undefined : yield* tx.langgraph.getThread(userId, threadId, "");
  const travelled = root && rootAt !== undefined ? yield* tx.langgraph.pointOf(root.sessionId, rootAt) : undefined;
  // A subgraph's head while its parent's thread stands where it was moved to: as the subgraph waited there.
  const through = thread && checkpointId === undefined && !travelled ? yield* throughParent(tx, userId, threadId, ns) : null;
  if (thread && through && through.undone !== null) {
    const at = through.at;
    return (
      at && {
        thread,
        at,
        undone: through.undone,
        waits: at.kind === "stored" ? yield* subgraphWaits(tx, userId, threadId, ns, at.row) : undefined,
      }
    );
  }
  const at = thread && (yield* checkpointOf(ctx, tx, thread, checkpointId));
  if (!at) return undefined;
  // A `checkpointer: true` subgraph's memory, as its parent's current lineage keeps it (`subgraph-memory.ts`).
  const memory =
    checkpointId === undefined && at.kind === "stored" && at.moved !== true
      ? yield* memoryOnParentLineage(tx, userId, threadId, ns, thread.sessionId, at.row, travelled)
      : undefined;
  if (memory)
    return memory.row && { thread, at: { kind: "stored" as const, row: memory.row, moved: true }, undone: memory.undone, waits: undefined };
  if (at.kind === "stored" && checkpointId !== undefined) {
    // Read by its id: the writes the session's current lineage still holds (`undoneById`); the head's, as the head's.
    const current = yield* currentLineage(tx, thread);
    const head =
      current.served?.kind === "stored" && current.served.moved === true && current.served.row.checkpointId === at.row.checkpointId;
    const waits = head ? yield* subgraphWaits(tx, userId, threadId, ns, at.row) : undefined;
    return { thread, at, undone: yield* undoneById(tx, thread, at.row, current), waits };
  }
  if (at.moved !== true) {
    // Its own head, where its parent's move left it (`throughParent`): its subgraphs follow that move still.
    const waits = through && at.kind === "stored" ? yield* subgraphWaits(tx, userId, threadId, ns, at.row) : undefined;
    return { thread, at, undone: null, waits };
  }
  const { branch, head } = yield* ownedCurrent(tx, thread.sessionId, thread.userId);
  const points = at.kind === "stored" ? yield* tx.langgraph.pointsOf(thread.sessionId) : [];
  const waits = at.kind === "stored" ? yield* subgraphWaits(tx, userId, threadId, ns, at.row) : undefined;
  return { thread, at, undone: yield* undoneAt(tx, thread, at, { branch, head, points }), waits };
}

/** The checkpoint `checkpointId` names in the thread (stored or synthesized), or the thread's head (in a read unit). */
function* checkpointOf(
  ctx: EngineContext,
  tx: Tx,
  thread: LgThreadRow,
  checkpointId: string | undefined,
): Step<PointCheckpoint | undefined> {
  if (checkpointId === undefined) {
    const { branch, head } = yield* currentToServe(ctx, tx, thread.sessionId, thread.userId);
    return yield* checkpointAt(tx, thread.sessionId, branch, head.position);
  }
  const row = yield* tx.langgraph.getCheckpoint(thread.sessionId, checkpointId);
  if (row) return { kind: "stored", row };
  const current = yield* tx.getBranch((yield* ownedSession(tx, thread.sessionId, thread.userId)).currentBranchId);
  const synth = yield* resolveSynthesized(tx, thread.sessionId, checkpointId, current);
  return synth && { kind: "synthesized", synth };
}
