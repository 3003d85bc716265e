// ForkpointSaver's configFor: a LangGraph config to invoke a graph from a branch's head or a checkpoint of a thread.
import type { RunnableConfig } from "@langchain/core/runnables";
import { ConflictError, NotFoundError, ValidationError } from "../models/errors.js";
import { idSchema, parseInput } from "../models/inputs.js";
import type { BranchRow, LgThreadRow, Step, Tx } from "../store/port/index.js";
import { entryAt, headOf, ownedCurrent, ownedSession, sessionCheckpoint, type EngineContext } from "../sessions/langgraph-bridge.js";
import { configOf, userIn, type SaverParts } from "./saver-parts.js";
import { checkpointAt, type PointCheckpoint } from "./thread-head.js";

/**
 * `{ branchId }`: that branch's head; `{ checkpointId }`: a LangGraph checkpoint's own config, or for a forkpoint
 * checkpoint of a thread's session (a user's own), a checkpoint at its position (synthesized where no LangGraph
 * checkpoint sits: `thread-head.ts`), or the thread's head when that stands for it (`headStandingFor`). `NotFoundError`
 * for ids that are not the user's threads'.
 */
export async function configFor(
  parts: SaverParts,
  target: { branchId: string } | { checkpointId: string },
  options: { userId?: string } | undefined,
): Promise<RunnableConfig> {
  if (target === null || typeof target !== "object") throw new ValidationError("target", "must be { branchId } or { checkpointId }");
  const userId = userIn(parts, options);
  const ctx = await parts.engine();
  const found = await ctx.store.read((tx) => configForUnit(tx, target, userId, ctx));
  const { thread, at } = found;
  if (!at) {
    // An empty start (nothing written on that branch yet): the thread itself.
    const { checkpoint_id: _none, ...configurable } = configOf(parts, thread, "").configurable!;
    return { configurable };
  }
  return configOf(parts, thread, at.kind === "stored" ? at.row.checkpointId : at.synth.id);
}

/**
 * The thread's head checkpoint, when it stands for a user's checkpoint at `position` of `branch` (synthesized there as
 * `at`): the head is a stored LangGraph checkpoint, the one `at` is built on, and the head's world holds the point with
 * no message since it (only tool calls and state changes came after that checkpoint: a node's call journaled beside a
 * task that stopped, the app's own). The graph goes on from it with its pending writes, as from the thread's head, so a
 * task that finished there is not run again, nor its call; a checkpoint synthesized there has none of its writes
 * (LangGraph's task ids derive from its checkpoint's id) and would be read as an older one, whose tasks all run again.
 */
function* headStandingFor(
  tx: Tx,
  thread: LgThreadRow,
  branch: BranchRow,
  position: number,
  at: PointCheckpoint | undefined,
): Step<PointCheckpoint | undefined> {
  if (at?.kind !== "synthesized" || !at.synth.base) return undefined;
  const current = yield* ownedCurrent(tx, thread.sessionId, thread.userId);
  const segment = (yield* tx.lineage(current.branch.id, current.head.position)).find((s) => s.branchId === branch.id);
  if (!segment || segment.upTo < position || (yield* entryAt(tx, branch, position))?.msgCount !== current.head.msgCount) return undefined;
  const head = yield* checkpointAt(tx, thread.sessionId, current.branch, current.head.position);
  return head?.kind === "stored" && head.row.checkpointId === at.synth.base.checkpointId ? head : undefined;
}

function* configForUnit(
  tx: Tx,
  target: { branchId: string } | { checkpointId: string },
  userId: string,
  ctx: EngineContext,
): Step<{ thread: LgThreadRow; at: PointCheckpoint | undefined }> {
  if ("branchId" in target) {
    const branchId = parseInput(idSchema, target.branchId, "target.branchId");
    const branch = yield* tx.getBranch(branchId);
    const thread = branch && (yield* tx.langgraph.threadOfSession(branch.sessionId));
    if (!branch || !thread || thread.userId !== userId) throw new NotFoundError("branch", branchId);
    yield* ownedSession(tx, thread.sessionId, userId);
    return { thread, at: yield* checkpointAt(tx, thread.sessionId, branch, (yield* headOf(tx, branch)).position) };
  }
  const checkpointId = parseInput(idSchema, (target as { checkpointId: unknown }).checkpointId, "target.checkpointId");
  const cp = yield* tx.getCheckpoint(checkpointId);
  const thread = cp && cp.userId === userId ? yield* tx.langgraph.threadOfSession(cp.sessionId) : undefined;
  if (cp && thread && thread.userId === userId) {
    yield* sessionCheckpoint(tx, yield* ownedSession(tx, cp.sessionId, userId), checkpointId, ctx.now());
    const lg = yield* tx.langgraph.checkpointInFp(cp.id);
    if (lg) return { thread, at: { kind: "stored", row: lg } };
    const branch = (yield* tx.getBranch(cp.branchId))!;
    const at = yield* checkpointAt(tx, cp.sessionId, branch, cp.position, "point", undefined, cp.seq);
    return { thread, at: (yield* headStandingFor(tx, thread, branch, cp.position, at)) ?? at };
  }
  // A LangGraph checkpoint id: unique within a thread, so looked up among the user's threads.
  const rows = yield* tx.langgraph.listCheckpoints({ userId, checkpointId, metadata: [] });
  if (rows.length === 0) throw new NotFoundError("checkpoint", checkpointId);
  if (rows.length > 1)
    throw new ConflictError(
      `LangGraph checkpoint ${checkpointId} is in several threads: name its forkpoint checkpoint instead`,
      "AMBIGUOUS_CHECKPOINT",
    );
  return { thread: (yield* tx.langgraph.threadOfSession(rows[0]!.sessionId))!, at: { kind: "stored", row: rows[0]! } };
}
