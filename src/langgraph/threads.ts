// A LangGraph thread's row: looked up, or started with its forkpoint session and that session's empty start checkpoint.
import { ConflictError } from "../models/errors.js";
import { newId } from "../models/ids.js";
import { toJsonText } from "../models/json.js";
import type { LgThreadRow, Step, Tx } from "../store/port/index.js";
import { headOfEntry, writeCheckpoint, writeNewSession, type EngineContext } from "../sessions/langgraph-bridge.js";

/** The thread's row, if the user has that thread (namespace). */
export function findThread(ctx: EngineContext, userId: string, threadId: string, ns: string): Promise<LgThreadRow | undefined> {
  return ctx.store.read((tx) => tx.langgraph.getThread(userId, threadId, ns));
}

/** The thread's session with its empty start checkpoint (or the one another writer created meanwhile). */
export async function createThread(ctx: EngineContext, userId: string, threadId: string, ns: string): Promise<LgThreadRow> {
  // The session it would start: the one session the unit writes.
  const sessionId = newId("ses");
  try {
    return await ctx.store.write({ sessionId }, (tx) => createThreadUnit(tx, userId, threadId, ns, ctx, sessionId));
  } catch (error) {
    const thread = startedElsewhere(error) ? await findThread(ctx, userId, threadId, ns) : undefined;
    if (thread) return thread;
    throw error;
  }
}

function* createThreadUnit(tx: Tx, userId: string, threadId: string, ns: string, ctx: EngineContext, sessionId: string) {
  return (yield* tx.langgraph.getThread(userId, threadId, ns)) ?? (yield* startThread(ctx, tx, userId, threadId, ns, sessionId));
}

/**
 * Whether a unit that started a thread failed because another writer started it at the same time: on a shared
 * database, where each locks the new session it starts, the other's row is not visible until it commits, and the
 * second insert of the thread is refused. The thread the other started is then the one to use.
 */
export function startedElsewhere(error: unknown): boolean {
  return error instanceof ConflictError && error.code === "ALREADY_EXISTS";
}

/**
 * A new thread's row, with its session (`sessionId`, new) and empty start checkpoint, in the caller's write unit
 * (which locks `sessionId`), where the thread was just found missing.
 */
export function* startThread(
  ctx: EngineContext,
  tx: Tx,
  userId: string,
  threadId: string,
  ns: string,
  sessionId: string,
): Step<LgThreadRow> {
  const title = ns === "" ? threadId : `${threadId} (${ns})`;
  const { id, branchId } = yield* writeNewSession(
    ctx,
    tx,
    {
      userId,
      title: title.length > 512 ? title.slice(0, 512) : title,
      metadata: toJsonText({ langgraph: { threadId, checkpointNs: ns } }, "metadata", ctx.limits),
    },
    sessionId,
  );
  // Automatic, as LangGraph's own are: a user's listing of their own checkpoints (`auto: false`) leaves it out.
  const start = yield* writeCheckpoint(ctx, tx, { id, userId }, branchId, headOfEntry(undefined), {
    name: "langgraph:start",
    auto: true,
    metadata: null,
  });
  const row = { userId, threadId, checkpointNs: ns, sessionId: id, startCheckpointId: start.id };
  yield* tx.langgraph.insertThread(row);
  return row;
}
