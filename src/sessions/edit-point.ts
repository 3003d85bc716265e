// Where an edit of a message forks: just before it, or before the tool calls it caused that were journaled first.
import type { BranchRow, EntryRow, Step, Tx } from "../store/port/index.js";
import { messageBefore } from "./versions.js";

/**
 * The message metadata key naming, by `callId`, tool calls a message caused that were journaled before the message
 * was written (an agent framework saves a run's input once the run's calls have run): an edit of the message forks
 * before the earliest of them, so they are undone with it.
 */
export const CAUSED_CALLS_KEY = "forkpointCausedCalls";

/**
 * The position an edit of `message` (on `branch`'s lineage) forks at: just before it, or, when its metadata names
 * caused calls (`CAUSED_CALLS_KEY`), just before the earliest tool call of its lineage between the message before it
 * and itself whose `callId` is named. Only tool calls and state changes are passed over, never a message: a name that
 * matches nothing there (another session's call, a call before the message before it) changes nothing.
 */
export function* editForkPosition(tx: Tx, branch: BranchRow, message: EntryRow): Step<number> {
  const before = message.position - 1;
  const caused = causedCalls(message.metadata);
  if (caused.size === 0) return before;
  const from = (yield* messageBefore(tx, branch, message.position))?.position ?? 0;
  for (const segment of yield* tx.lineage(branch.id, before)) {
    if (segment.upTo <= from) continue;
    const range = { branchId: segment.branchId, after: Math.max(segment.after, from), upTo: Math.min(segment.upTo, before) };
    for (const row of yield* tx.segmentEntries(range))
      if (row.kind === "tool" && row.callId !== null && caused.has(row.callId)) return row.position - 1;
  }
  return before;
}

/** The call ids a message's metadata names as caused (none when it names none, or names them in another shape). */
function causedCalls(metadata: string | null): Set<string> {
  // Most messages name none: their metadata is not parsed.
  if (metadata === null || !metadata.includes(`"${CAUSED_CALLS_KEY}"`)) return new Set();
  const parsed: unknown = JSON.parse(metadata);
  const named = typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>)[CAUSED_CALLS_KEY] : undefined;
  return new Set(Array.isArray(named) ? named.filter((id): id is string => typeof id === "string") : []);
}
