// Where messages given `after: messageId` land: right after that message, on its own lineage, never another conversation.
import type { BranchRow, EntryRow, SessionRow, Step, Tx } from "../../store/port/index.js";
import type { EngineContext } from "../core/context.js";
import { sessionMessage } from "../core/owned.js";
import { forkedBranch } from "./forked-branch.js";
import { entryAt, lastLineageMessage } from "./lineage.js";
import { headOf, headOfEntry, type Head } from "../core/head.js";
import { isOwnCall } from "./own-calls.js";
import { endingAsIfNeverRan } from "../moves/continued.js";

/** How the ids forkpoint makes for messages begin (see models/ids.ts); tool calls' and state changes' begin otherwise. */
const MESSAGE_ID_PREFIX = "msg_";

/** Where to write: a branch and the head to write after; `fork` is a branch to create there first (`settleLanding`). */
export interface Landing {
  branchId: string;
  head: Head;
  fork?: BranchRow;
}

/**
 * Where messages that follow message `afterId` land, read without writing (a unit may still ask for a workspace scan
 * after it). While it is the current lineage's last message: the current branch, as usual. When the session has moved
 * on (an edit, a rollback, another tab): the branch whose lineage's last message it is (its own branch first, else the
 * newest such), entered at its head (after the calls made since, the answer's own); with none, a new branch forked right
 * after it (and after the calls and state changes that follow it in the current lineage), so what is written becomes
 * a version of what follows it. The current branch stays as it is. An agent loop's call (`loopCall`, with `own` the ids
 * of the loop's calls made before) never lands after another loop's calls following the message (see `loopCallLanding`);
 * the app's own call (`appCall`) lands at the head while only an answer follows the message there, its only version
 * (see `answeredOnly`).
 * `NotFoundError` when the message is not one of this session's.
 */
export function* findLanding(
  tx: Tx,
  session: SessionRow,
  current: { branch: BranchRow; head: Head },
  afterId: string,
  calls?: readonly string[],
  own?: ReadonlySet<string>,
  loopCall = false,
  appCall = false,
): Step<Landing> {
  // The usual case costs nothing: the answer follows its question at the head. The head may be a tool call or a state
  // change, no message to follow: only an id forkpoint made for a message skips the lookup (any other id is read). An
  // answer naming calls that are not there (its loop's, made before a rollback to the question) is looked for.
  if (current.head.entryId === afterId && afterId.startsWith(MESSAGE_ID_PREFIX) && !calls?.length)
    return { branchId: current.branch.id, head: current.head };
  const found = yield* sessionMessage(tx, session, afterId);
  const currentEnds = (yield* lastLineageMessage(tx, current.branch.id))?.id === afterId;
  // A failed guarded block's branch, its writes after the message: entered as if the block never ran.
  const ending = yield* endingAsIfNeverRan(tx, yield* tx.branchesEndingAt(session.id, afterId), found.message);
  // Several branches ending at the message (another tab rolled back to a checkpoint right at it): the one holding the
  // answer's own calls (`calls`, the ids of the calls it names) is the answer's.
  if (calls && calls.length > 0 && (ending.length > 1 || (currentEnds && ending.some((b) => b.id !== current.branch.id)))) {
    const mine = yield* holdingCalls(tx, currentEnds ? [current.branch, ...ending] : ending, found.message.position, calls);
    if (mine) return { branchId: mine.id, head: yield* headOf(tx, mine) };
  }
  if (loopCall && own) return yield* loopCallLanding(tx, session, current, found, currentEnds, ending, own);
  if (currentEnds) return { branchId: current.branch.id, head: current.head };
  // The app's own call (`appCall`: no loop's) after a question its answer follows on the current lineage (saved after a
  // step, `onStepEnd`, where the app makes the call): the answer is no moving on, and the call lands with it, at the head.
  if (appCall && (yield* answeredOnly(tx, session, current, found.message))) return { branchId: current.branch.id, head: current.head };
  const target = ending.find((b) => b.id === found.branch.id) ?? ending.at(-1);
  if (target) return { branchId: target.id, head: yield* headOf(tx, target) };
  // While the message is in the current lineage, the fork comes after the tool calls and state changes that follow it
  // there: the answer's own, made before another tab wrote (an agent loop's first calls), stay in its lineage. Off the
  // current lineage (a rollback past it) which calls were the answer's is not known: none are taken.
  const inLineage = (yield* entryAt(tx, current.branch, found.message.position))?.id === found.message.id;
  return yield* forkRightAfter(tx, session, inLineage ? current.branch : undefined, found.message, own);
}

/**
 * Where an agent loop's call following the message lands (`own`: the ids of the loop's calls made before): on a branch
 * whose lineage ends at the message and whose calls after it are all the loop's own (the most of them; the current
 * branch, then the message's own, then the newest on a tie), never after another loop's calls answering the same
 * message (a double submit, a request sent again whose model went on otherwise); with none, on a new branch forked
 * right after it and the loop's own calls that follow it.
 */
function* loopCallLanding(
  tx: Tx,
  session: SessionRow,
  current: { branch: BranchRow; head: Head },
  found: { message: EntryRow; branch: BranchRow },
  currentEnds: boolean,
  ending: readonly BranchRow[],
  own: ReadonlySet<string>,
): Step<Landing> {
  const candidates = [
    ...(currentEnds ? [current.branch] : []),
    ...ending.filter((b) => b.id === found.branch.id),
    ...[...ending].reverse(),
  ].filter((b, i, all) => all.findIndex((o) => o.id === b.id) === i);
  let best: BranchRow | undefined;
  let most = -1;
  for (const branch of candidates) {
    const held = yield* ownCallsAfter(tx, branch, found.message.position, own);
    if (held > most) [best, most] = [branch, held];
  }
  if (best) return { branchId: best.id, head: best.id === current.branch.id ? current.head : yield* headOf(tx, best) };
  const inLineage = (yield* entryAt(tx, current.branch, found.message.position))?.id === found.message.id;
  return yield* forkRightAfter(tx, session, inLineage ? current.branch : candidates[0], found.message, own);
}

/**
 * Whether `message` is on the current lineage and only an answer follows it there: assistant messages (an answer's
 * forms), tool calls and state changes, no user's message (another tab's question), up to the head (bounded). The
 * answer must begin on the message's own branch: one on a branch forked after it is another version (a regenerate
 * from another tab), not the answer the app's call goes with. And it must be the message's only version anywhere: with
 * two (a double submit, a regenerate, another tab's question) nothing tells which one the call's request saved.
 */
function* answeredOnly(tx: Tx, session: SessionRow, current: { branch: BranchRow; head: Head }, message: EntryRow): Step<boolean> {
  if ((yield* entryAt(tx, current.branch, message.position))?.id !== message.id) return false;
  if (current.head.position - message.position > MAX_FOLLOWING) return false;
  let answer: EntryRow | undefined;
  for (let p = message.position + 1; p <= current.head.position; p++) {
    const entry = yield* entryAt(tx, current.branch, p);
    if (entry?.kind !== "message") continue;
    if (entry.role !== "assistant" || (!answer && entry.branchId !== message.branchId)) return false;
    answer ??= entry;
  }
  if (!answer) return false;
  const versions = yield* tx.versionsAfter(session.id, message.id);
  return versions.length === 1 && versions[0]!.id === answer.id;
}

/** How many of `own` the calls after the message at `position` on `branch` are; -1 when another's is among them. */
function* ownCallsAfter(tx: Tx, branch: BranchRow, position: number, own: ReadonlySet<string>): Step<number> {
  let held = 0;
  for (let p = position + 1; p <= position + MAX_FOLLOWING; p++) {
    const entry = yield* entryAt(tx, branch, p);
    if (!entry) break;
    if (entry.kind !== "tool" || entry.callId === null) continue;
    if (!isOwnCall(own, entry)) return -1;
    held++;
  }
  return held;
}

/**
 * A landing on a new branch forked right after `message` (undefined: at the start of `on`), and, on branch `on`'s
 * lineage, after the tool calls and state changes that follow it there (`on` undefined: none are taken). With `own` (the
 * ids of the calls of the loop whose write this is), only up to the first call with another id: another loop's calls
 * (another request answering the same question) stay off the fork; the app's own calls (no id) are kept, unless another
 * loop's call follows them.
 */
export function* forkRightAfter(
  tx: Tx,
  session: SessionRow,
  on: BranchRow | undefined,
  message: EntryRow | undefined,
  own?: ReadonlySet<string>,
): Step<Landing> {
  let from = message;
  // Where the fork would come before the app's calls (no id) taken since the loop's last own call or state change.
  let beforeApp: { entry: EntryRow | undefined } | undefined;
  for (let p = (message?.position ?? 0) + 1; on !== undefined; p++) {
    const next = yield* entryAt(tx, on, p);
    if (!next || next.kind === "message") break;
    // A call with no id is the app's own (`invoke` or `recordToolCall` between the question's save and the loop): a
    // loop's calls always carry the model's id. It stays with the answer, as the calls after it do, unless another
    // loop's call comes next: it may then be that request's app call (a double submit, each making one), so it stays off.
    if (own && next.kind === "tool" && next.callId !== null && !isOwnCall(own, next)) {
      if (beforeApp) from = beforeApp.entry;
      break;
    }
    if (next.kind === "tool" && next.callId === null) beforeApp ??= { entry: from };
    else beforeApp = undefined;
    from = next;
  }
  const fork = forkedBranch(session.id, { parentId: from?.branchId ?? on!.id, position: from?.position ?? 0, entryId: from?.id ?? null });
  return { branchId: fork.id, head: headOfEntry(from), fork };
}

/** Of `branches` (each ending at the message at `position`), the one whose entries after it hold most of `calls`. */
function* holdingCalls(tx: Tx, branches: readonly BranchRow[], position: number, calls: readonly string[]): Step<BranchRow | undefined> {
  const wanted = new Set(calls);
  let best: BranchRow | undefined;
  let most = 0;
  for (const branch of branches) {
    let held = 0;
    // What follows the message there is no message: the calls and state changes made since (a loop's, bounded).
    for (let p = position + 1; p <= position + MAX_FOLLOWING; p++) {
      const entry = yield* entryAt(tx, branch, p);
      if (!entry) break;
      if (entry.kind === "tool" && isOwnCall(wanted, entry)) held++;
    }
    if (held > most) [best, most] = [branch, held];
  }
  return best;
}

/** How many entries after the message `holdingCalls` reads on each branch. */
const MAX_FOLLOWING = 256;

/** Creates the landing's new branch, if it has one (no move: the session stays on its current branch). */
export function* settleLanding(ctx: EngineContext, tx: Tx, landing: Landing): Step<void> {
  if (!landing.fork) return;
  landing.fork.createdAt = ctx.now();
  yield* tx.insertBranch(landing.fork);
}
