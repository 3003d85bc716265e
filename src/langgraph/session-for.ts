// ForkpointSaver's sessionFor: the forkpoint session a LangGraph thread lives in, as `fp.getSession` gives it.
import { NotFoundError, ValidationError } from "../models/errors.js";
import { idSchema, parseInput } from "../models/inputs.js";
import type { Forkpoint, SessionHandle } from "../sessions/langgraph-bridge.js";
import { guardRunCalls } from "./run-fork-guard.js";
import { threadKey, userIn, type SaverParts } from "./saver-parts.js";
import { findThread } from "./threads.js";

/**
 * The session of the user's thread (`options.checkpointNs`: one of its namespaces); `NotFoundError` (kind "thread") when
 * there is none. Its calls made in a node of a run of `saver`'s graph that its put will fork away from are refused
 * (`run-fork-guard.ts`).
 */
export async function sessionFor(
  parts: SaverParts,
  saver: unknown,
  fp: Forkpoint,
  threadId: string,
  options: { userId?: string; checkpointNs?: string } | undefined,
): Promise<SessionHandle> {
  const id = parseInput(idSchema, threadId, "threadId");
  const userId = userIn(parts, options);
  const ns = options?.checkpointNs ?? "";
  if (typeof ns !== "string") throw new ValidationError("options.checkpointNs", "must be a string");
  // A tool of the graph's current step calls this while the previous step's put may still be landing.
  await parts.landing.settled(threadKey(userId, id, ns));
  const ctx = await parts.engine();
  const thread = await findThread(ctx, userId, id, ns);
  if (!thread) throw new NotFoundError("thread", id);
  return guardRunCalls(parts, await fp.getSession(thread.sessionId, { userId }), { saver, userId, threadId: id, ns });
}
