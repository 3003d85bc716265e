// ForkpointSaver's deleteThread: every namespace of a user's thread deleted, with its sessions and saver rows.
import { ValidationError } from "../models/errors.js";
import { deleteSessions, type EngineContext } from "../sessions/langgraph-bridge.js";
import { assertSaverKey, userIn, type SaverParts } from "./saver-parts.js";

/**
 * Deletes every namespace of the thread: its sessions, with all they recorded, and its saver rows. The thread is
 * `options.userId`'s (default: the saver's user).
 */
export async function deleteThread(parts: SaverParts, threadId: string, options: { userId?: string } | undefined): Promise<void> {
  if (typeof threadId !== "string" && typeof threadId !== "number") throw new ValidationError("threadId", "must be a string");
  assertSaverKey(String(threadId), "threadId");
  const userId = userIn(parts, options);
  const ctx = await parts.engine();
  const sessions = await ctx.store.read((tx) => tx.langgraph.threadSessions(userId, String(threadId)));
  await deleteThreadSessions(parts, ctx, userId, sessions);
}

/**
 * Deletes the sessions of threads (every namespace of each) in one transaction: a refused one (a move in progress)
 * leaves them all. What the saver kept of them goes too.
 */
export async function deleteThreadSessions(parts: SaverParts, ctx: EngineContext, userId: string, sessions: string[]): Promise<void> {
  await deleteSessions(
    ctx,
    sessions.map((id) => ({ id, userId })),
    "skip",
  );
  for (const id of sessions) {
    parts.cache.delete(id);
    parts.verified.delete(id);
  }
  const gone = new Set(sessions);
  for (const [key, id] of [...parts.sessions.entries()]) if (gone.has(id)) parts.sessions.delete(key);
}
