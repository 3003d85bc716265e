// Makes a session's history equal a list the app holds: the unchanged prefix kept, a changed message an edit, the rest appended.
import { isDeepStrictEqual } from "node:util";
import type { Message, MessageInput } from "../models/types.js";
import { forkBefore } from "../sessions/fork-before.js";
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
 * version (an edit: a branch forked before it); a list shorter than the history forks before the first message it
 * lacks (the old branch stays in the tree); the messages after that are appended in one transaction.
 */
export async function syncHistory(s: SessionHandle, inputs: MessageInput[]): Promise<SaveResult> {
  const history = await s.history();
  let kept = 0;
  while (kept < history.length && kept < inputs.length && isDeepStrictEqual(comparable(history[kept]!), comparable(inputs[kept]!))) kept++;
  let forked: SaveResult["forked"] = null;
  let from = kept;
  if (kept < history.length) {
    const differing = history[kept]!;
    if (kept < inputs.length) {
      await s.edit(differing.id, inputs[kept]!);
      forked = "edit";
      from = kept + 1;
    } else {
      await sessionEngine(s).run((ctx, ref) => forkBefore(ctx, ref, differing.id));
      forked = "truncate";
    }
  }
  const rest = inputs.slice(from);
  if (rest.length > 0) await s.append(rest);
  return { kept, forked, appended: rest.length };
}
