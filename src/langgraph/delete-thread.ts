// ForkpointSaver's deleteThread: every namespace of a user's thread deleted, with its sessions and saver rows.
import { ValidationError } from "../models/errors.js";
import { assertPlainText } from "../models/strings.js";
import { deleteSessions } from "../sessions/langgraph-bridge.js";
import { userIn, type SaverParts } from "./saver-parts.js";

/**
 * Deletes every namespace of the thread: its sessions, with all they recorded, and its saver rows. The thread is
 * `options.userId`'s (default: the saver's user).
 */
export async function deleteThread(parts: SaverParts, threadId: string, options: { userId?: string } | undefined): Promise<void> {
  if (typeof threadId !== "string" && typeof threadId !== "number") throw new ValidationError("threadId", "must be a string");
  assertPlainText(String(threadId), "threadId");
  const userId = userIn(parts, options);
  const ctx = await parts.engine();
  const sessions = await ctx.store.read((tx) => tx.langgraph.threadSessions(userId, String(threadId)));
  // One transaction for all its namespaces: a refused one (a move in progress) leaves the whole thread.
  await deleteSessions(
    ctx,
    sessions.map((id) => ({ id, userId })),
    "skip",
  );
  for (const id of sessions) {
    parts.cache.delete(id);
    parts.verified.delete(id);
  }
  for (const [key, id] of [...parts.sessions.entries()]) if (sessions.includes(id)) parts.sessions.delete(key);
}
