// Makes a session's history equal a list the app holds: the unchanged prefix kept, a changed message an edit, the rest appended.
import { isDeepStrictEqual } from "node:util";
import type { MessageInput } from "../models/types.js";
import { PayloadTooLargeError } from "../models/errors.js";
import { messageFields } from "../sessions/append.js";
import { forkAfter } from "../sessions/fork-after.js";
import { sessionEngine, type SessionHandle } from "../sessions/session-handle.js";

/** What `saveChat` did: how many stored messages it kept as they were, whether it forked a new branch, how many it appended. */
export interface SaveResult {
  kept: number;
  /** "edit": a changed message became a new version; "truncate": the list ended before the history did; null: neither. */
  forked: "edit" | "truncate" | null;
  appended: number;
}

const comparable = (m: Pick<MessageInput, "role" | "content"> & { clientId?: string | null; metadata?: unknown }) => ({
  role: m.role, content: m.content, clientId: m.clientId ?? null, metadata: m.metadata ?? null,
});

/**
 * Brings the current branch to `inputs`: the longest unchanged prefix stays; the first changed message becomes a new
 * version (an edit: a branch forked before it); a list shorter than the history forks right after its last message
 * (the old branch stays in the tree; tool calls made after that message are undone); the messages after that are appended in one transaction.
 */
export async function syncHistory(s: SessionHandle, inputs: MessageInput[]): Promise<SaveResult> {
  const history = await s.history();
  let kept = 0;
  while (kept < history.length && kept < inputs.length && isDeepStrictEqual(comparable(history[kept]!), comparable(inputs[kept]!))) kept++;
  // Everything to be written is checked before the first write: a bad message leaves the history as it was.
  const { ctx } = sessionEngine(s);
  for (let i = kept; i < inputs.length; i++) messageFields(ctx, inputs[i], `messages[${i}]`);
  const appending = inputs.length - kept - (kept < history.length && kept < inputs.length ? 1 : 0);
  if (appending > ctx.limits.maxBatch) {
    throw new PayloadTooLargeError("messages", `at most ${ctx.limits.maxBatch} new messages per save (got ${appending})`, ctx.limits.maxBatch);
  }
  let forked: SaveResult["forked"] = null;
  let from = kept;
  if (kept < history.length) {
    const differing = history[kept]!;
    if (kept < inputs.length) {
      await s.edit(differing.id, inputs[kept]!);
      forked = "edit";
      from = kept + 1;
    } else {
      // Right after the last message kept: tool calls made after it (the dropped answer's) are undone too.
      const lastKept = kept > 0 ? history[kept - 1]!.id : null;
      await sessionEngine(s).run((ctx, ref) => forkAfter(ctx, ref, lastKept));
      forked = "truncate";
    }
  }
  const rest = inputs.slice(from);
  if (rest.length > 0) await s.append(rest);
  return { kept, forked, appended: rest.length };
}
