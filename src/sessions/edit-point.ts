// Where an edit of a message forks: just before it, or before the tool calls it caused that were journaled first.
import { ConflictError } from "../models/errors.js";
import type { BranchRow, EntryRow, Step, Tx } from "../store/port/index.js";
import { entryAt } from "./log/lineage.js";
import { messageBefore } from "./versions.js";

/**
 * The message metadata key naming, by `callId`, tool calls a message caused that were journaled before the message
 * was written (an agent framework saves a run's input once the run's calls have run): an edit of the message forks
 * before the earliest of them, so they are undone with it.
 */
export const CAUSED_CALLS_KEY = "forkpointCausedCalls";

/**
 * The message metadata key naming where the calls of `CAUSED_CALLS_KEY` may lie: after that message (the last one the
 * run read as it started; null: a run that read an empty conversation). Without it, after the message before.
 */
export const CAUSED_AFTER_KEY = "forkpointCausedAfter";

/**
 * The message metadata key of a message written with the one naming caused calls, after it (the run's later input
 * items, what its model said before its first call): how many messages before it that one lies (a positive integer).
 * An edit of it takes off the conversation the calls' items, which the batch holds after it: it forks where an edit of
 * that message would, and the messages of the batch before it go on the new branch again, before the new version.
 */
export const CAUSED_WITH_KEY = "forkpointCausedWith";

/** What the search needs of the message edited or popped. */
type CausingMessage = Pick<EntryRow, "id" | "position" | "metadata">;

/**
 * Where an edit of `message` (on `branch`'s lineage) forks (see `editForkPosition`), and the messages written again on
 * the new branch before the new version: for a message written after the one naming the calls (`CAUSED_WITH_KEY`)
 * whose edit forks before them, that one and the messages between (in position order); else none.
 */
export function* editPoint(tx: Tx, branch: BranchRow, message: CausingMessage): Step<{ position: number; carried: EntryRow[] }> {
  const before = message.position - 1;
  const batch = yield* causingBatch(tx, branch, message);
  if (batch === null) return { position: yield* editForkPosition(tx, branch, message), carried: [] };
  const position = yield* editForkPosition(tx, branch, batch[0]!);
  // No named call lies before the batch: the edit forks just before the message, as any.
  if (position >= batch[0]!.position - 1) return { position: before, carried: [] };
  return { position, carried: batch };
}

/**
 * The message naming caused calls that `message` says it was written after (`CAUSED_WITH_KEY`), and the messages
 * between, in position order, when each of them says so too (they lie right after it, one batch); else null.
 */
function* causingBatch(tx: Tx, branch: BranchRow, message: CausingMessage): Step<EntryRow[] | null> {
  const index = causedWith(message.metadata);
  if (index === null || index >= message.position) return null;
  const batch: EntryRow[] = [];
  for (let i = index; i >= 1; i--) {
    const row = yield* entryAt(tx, branch, message.position - i);
    if (row?.kind !== "message") return null;
    if (i === index ? causedCalls(row.metadata) === null : causedWith(row.metadata) !== index - i) return null;
    batch.push(row);
  }
  return batch;
}

/**
 * The position an edit of `message` (on `branch`'s lineage) forks at: just before it, or, when its metadata names
 * caused calls (`CAUSED_CALLS_KEY`), just before the earliest tool call of its lineage whose `callId` is named, among
 * those after the message `CAUSED_AFTER_KEY` names (when that message is on its lineage; else after the message
 * before it) and before itself. Only tool calls and state changes are passed over, never a message: when a message
 * lies between the earliest named call and `message` (another run or writer added it while the run ran), the edit
 * is refused (`ConflictError` `RUN_INTERLEAVED`), since forking before the calls would leave that message out and
 * forking just before `message` would leave the calls applied. A name that matches no call there changes nothing.
 * Calls journaled right before the earliest one (no message between) that a later message of `branch` names as
 * caused (a run that ran alongside, its items saved after `message`, which the edit leaves out) are passed too.
 */
export function* editForkPosition(tx: Tx, branch: BranchRow, message: CausingMessage): Step<number> {
  const before = message.position - 1;
  const caused = causedCalls(message.metadata);
  if (caused === null) return before;
  const from =
    (yield* causedAfter(tx, branch, message, caused.after)) ?? (yield* messageBefore(tx, branch, message.position))?.position ?? 0;
  let earliest: EntryRow | undefined;
  // Calls not named, journaled right before the earliest named one (no message between): another run's, maybe.
  let others: EntryRow[] = [];
  for (const segment of yield* tx.lineage(branch.id, before)) {
    if (segment.upTo <= from) continue;
    const range = { branchId: segment.branchId, after: Math.max(segment.after, from), upTo: Math.min(segment.upTo, before) };
    for (const row of yield* tx.segmentEntries(range)) {
      if (earliest) {
        if (row.kind === "message") throw interleaved(message, earliest, row);
      } else if (row.kind === "message") others = [];
      else if (row.kind === "tool" && row.callId !== null) {
        if (caused.ids.has(row.callId)) earliest = row;
        else others.push(row);
      }
    }
  }
  if (!earliest) return before;
  const leftOut = others.length === 0 ? undefined : yield* earliestLeftOut(tx, branch, message, others);
  return (leftOut ?? earliest).position - 1;
}

/**
 * The earliest of `calls` (tool calls in position order, just before the fork, no message among them) that a message
 * after `message` on `branch`'s lineage names as caused: the calls of a run that ran alongside the edited one and
 * saved its items after it. The edit leaves those items out, so it forks before their calls too, passing no message.
 * The search reads the lineage a page at a time and ends at the first later input of a run that started after
 * `message` (what a chat's next run is): runs that ran alongside it saved before that one, as a rule.
 */
function* earliestLeftOut(tx: Tx, branch: BranchRow, message: CausingMessage, calls: EntryRow[]): Step<EntryRow | undefined> {
  const wanted = new Set(calls.map((c) => c.callId!));
  const named = new Set<string>();
  const head = (yield* tx.headPosition(branch.id)) ?? 0;
  search: for (const segment of yield* tx.lineage(branch.id, head)) {
    // A lineage's last segment is open-ended (upTo: the largest safe integer): its head ends it.
    const upTo = Math.min(segment.upTo, head);
    for (let after = Math.max(segment.after, message.position); after < upTo; after += LEFT_OUT_PAGE) {
      const page = { branchId: segment.branchId, after, upTo: Math.min(upTo, after + LEFT_OUT_PAGE) };
      for (const row of yield* tx.segmentEntries(page)) {
        const caused = row.kind === "message" ? causedCalls(row.metadata) : null;
        if (caused === null) continue;
        for (const id of caused.ids) if (wanted.delete(id)) named.add(id);
        if (wanted.size === 0 || (yield* startedAfter(tx, caused.after, message))) break search;
      }
    }
  }
  return calls.find((c) => named.has(c.callId!));
}

/** Entries read at once by the search for left-out runs' inputs. */
const LEFT_OUT_PAGE = 64;

/** Whether a run whose input names `after` as where it started read `message` (or a later message) first. */
function* startedAfter(tx: Tx, after: string | null | undefined, message: CausingMessage): Step<boolean> {
  if (typeof after !== "string") return false;
  if (after === message.id) return true;
  const named = yield* tx.getEntry(after);
  return named !== undefined && named.position > message.position;
}

/**
 * Refuses, as an edit of it would be (`RUN_INTERLEAVED`), a move that takes `message` (a message of the current
 * branch's lineage) off the conversation by forking right after the message before it (a pop, a replaced suffix)
 * when the calls it names as caused lie before another writer's message: they would stay applied. Otherwise that fork
 * undoes them already (they lie after the message before it).
 */
export function* assertCausedCallsPassable(tx: Tx, branchId: string, message: CausingMessage): Step<void> {
  // A message written after the one naming the calls (`CAUSED_WITH_KEY`) names none: that one stays, and the calls.
  if (causedCalls(message.metadata) === null) return;
  yield* editForkPosition(tx, (yield* tx.getBranch(branchId))!, message);
}

/**
 * The position of the message a caused-after name points at, when it is a message of `branch`'s lineage before
 * `message` (0 for null: the conversation's start); undefined when not named, or named elsewhere (then the message
 * before bounds the search, as when not named).
 */
function* causedAfter(tx: Tx, branch: BranchRow, message: CausingMessage, after: string | null | undefined): Step<number | undefined> {
  if (after === undefined) return undefined;
  if (after === null) return 0;
  const named = yield* tx.getEntry(after);
  if (!named || named.kind !== "message" || named.position >= message.position) return undefined;
  return (yield* entryAt(tx, branch, named.position))?.id === named.id ? named.position : undefined;
}

function interleaved(message: CausingMessage, call: EntryRow, other: EntryRow): ConflictError {
  return new ConflictError(
    `message ${JSON.stringify(message.id)} started a run whose tool call ${JSON.stringify(call.callId)} was made before ` +
      `message ${JSON.stringify(other.id)} was added (by another run or writer while it ran): an edit or pop of it would ` +
      "either leave that message out or leave the run's calls applied, so nothing was changed (roll back to a " +
      "checkpoint before the run, or edit an earlier message)",
    "RUN_INTERLEAVED",
  );
}

/** How many messages before it the message naming its batch's caused calls lies (`CAUSED_WITH_KEY`); null: none. */
function causedWith(metadata: string | null): number | null {
  if (metadata === null || !metadata.includes(`"${CAUSED_WITH_KEY}"`)) return null;
  const parsed: unknown = JSON.parse(metadata);
  if (typeof parsed !== "object" || parsed === null) return null;
  const index = (parsed as Record<string, unknown>)[CAUSED_WITH_KEY];
  return typeof index === "number" && Number.isSafeInteger(index) && index > 0 ? index : null;
}

/**
 * The call ids a message's metadata names as caused, and where they may lie (`after`: undefined when not named);
 * null when it names none, or names them in another shape.
 */
function causedCalls(metadata: string | null): { ids: Set<string>; after: string | null | undefined } | null {
  // Most messages name none: their metadata is not parsed.
  if (metadata === null || !metadata.includes(`"${CAUSED_CALLS_KEY}"`)) return null;
  const parsed: unknown = JSON.parse(metadata);
  if (typeof parsed !== "object" || parsed === null) return null;
  const o = parsed as Record<string, unknown>;
  const named = o[CAUSED_CALLS_KEY];
  const ids = new Set(Array.isArray(named) ? named.filter((id): id is string => typeof id === "string") : []);
  if (ids.size === 0) return null;
  const after = o[CAUSED_AFTER_KEY];
  return { ids, after: after === null || typeof after === "string" ? after : undefined };
}
