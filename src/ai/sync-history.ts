// Makes a session's history equal a list the app holds: the unchanged prefix kept, a changed message an edit, the rest appended.
// Just over 450 lines: one read-compare-write protocol whose steps (forms, forks, retries) share the stored list's reading.
import { isDeepStrictEqual } from "node:util";
import type { Message, MessageInput } from "../models/types.js";
import { ConflictError, PayloadTooLargeError, ValidationError } from "../models/errors.js";
import { appendAfter, appendAfterUnlessStored, messagesAfter } from "../sessions/writes/append-where.js";
import { messageFields } from "../sessions/writes/message-fields.js";
import { forkAfter } from "../sessions/fork-after.js";
import { currentHistory } from "../sessions/history.js";
import { checkSessionAt, type IfAt } from "../sessions/core/if-at.js";
import { orderedCompound } from "../sessions/core/call-order.js";
import { Backoff } from "../sessions/core/backoff.js";
import { servedHandler } from "../tools/handler-scope.js";
import { sessionEngine, type SessionHandle } from "../sessions/session-handle.js";
import { CONTINUES_KEY } from "../sessions/entry-refs.js";
import { refuseLaterCopies, refuseOffLineage, type CallReading } from "./off-lineage.js";
import { comparable, keeps, restates, same } from "./same-message.js";
import { answerCallKeys } from "./answer-call-keys.js";

/** What `saveChat` did: how many stored messages it kept as they were, whether it forked a new branch, how many it appended. */
export interface SaveResult {
  kept: number;
  /** "edit": a changed message became a new version; "truncate": the list ended before the history did; null: neither. */
  forked: "edit" | "truncate" | null;
  /** True when the last stored message went on (more parts of the same answer) and its longer form was appended after it. */
  continued: boolean;
  appended: number;
  /**
   * The stored message the list ends at now (its latest form; the earlier form it holds, for a list sent again after
   * its last answer went on): what a later save of the same chat passes as `after` (null for an empty list).
   */
  lastMessageId: string | null;
  /**
   * The current branch after the save (a fork's when it forked; that message may be on an ancestor of it, as after a
   * regenerate), unless a save with `after` landed elsewhere or another handle moved the session right after an edit
   * (its new messages follow the edited one on the edit's branch): the branch the answer is on. What the page sends as
   * its next `ifAt`.
   */
  branchId: string;
}

/**
 * The forkpoint metadata key of a message that is a later form of the message before it (the id of that entry):
 * entries are never rewritten, so an answer that grows across requests is stored again, whole, and read as one.
 */
export const CONTINUES = CONTINUES_KEY;

/**
 * One message of the app's list as stored: the entry it began as, its latest form (the same entry unless it went on),
 * and every form from the first to the latest.
 */
export interface StoredMessage {
  first: Message;
  latest: Message;
  forms: Message[];
}

/** Groups a history's entries into the app's messages: an entry marked as continuing the one before replaces it. */
export function storedMessages(history: Message[]): StoredMessage[] {
  const out: StoredMessage[] = [];
  for (const m of history) {
    const last = out.at(-1);
    if (last && m.metadata?.[CONTINUES] === last.latest.id) {
      last.latest = m;
      last.forms.push(m);
    } else out.push({ first: m, latest: m, forms: [m] });
  }
  return out;
}

export interface SyncOptions extends CallReading {
  /** Whether `next` is a later form of the stored last message `stored` (an answer continued by a later request). */
  continues?: (stored: Message, next: MessageInput) => boolean;
  /**
   * The ids of the calls a message shows run (`callsOf` when absent): an edit of an answer keeps those applied, and a
   * call it names as not run (an approval it denies) is undone with the forms after it.
   */
  shownCallsOf?: (message: MessageInput) => string[];
  /**
   * Whether a list ending at this message, the history going on after it, is the request that continued from it sent
   * again (a ModelMessage list ending at a tool message answering approvals), not a regenerate: nothing forks.
   */
  resends?: (message: MessageInput) => boolean;
  /** The form of a content compared to tell whether a message changed, when a framework writes one content several ways. */
  sameAs?: (content: unknown) => unknown;
  /** The stored message the list's new messages follow, on its own lineage (see `saveChat`'s `after`). */
  after?: string;
  /** The save's precondition (as any write's `ifAt`): the session's current branch (and head) the list was read at. */
  ifAt?: IfAt;
}

/**
 * Brings the current branch to `inputs`: the longest unchanged prefix stays; the first changed message becomes a new
 * version (an edit: a branch forked before it) unless it is the last stored message going on (`options.continues`),
 * which is appended again in its longer form, nothing undone; a list shorter than the history forks right after its
 * last message (the old branch stays in the tree; tool calls made after that message are undone); the messages after
 * that are appended in one transaction.
 */
export function syncHistory(s: SessionHandle, inputs: MessageInput[], options: SyncOptions = {}): Promise<SaveResult> {
  // One call of the handle's order, its read and its writes together: a rollback made after it goes after all of it.
  const save = () => syncSaving(s, inputs, options);
  return servedHandler(s.id) ? save() : orderedCompound(sessionEngine(s).ctx.events, s.id, save);
}

async function syncSaving(s: SessionHandle, inputs: MessageInput[], options: SyncOptions): Promise<SaveResult> {
  if (options.after !== undefined) {
    if (options.ifAt) await checkAt(s, options.ifAt);
    return syncAfter(s, inputs, options.after, options);
  }
  const { ctx } = sessionEngine(s);
  const backoff = Backoff.for(ctx.busyWaitMs);
  for (let read = 1; read <= SAVE_READS;) {
    let saved: SaveResult | null;
    try {
      saved = await syncOnce(s, inputs, options);
    } catch (error) {
      // Another server's move of the session under way (the same regenerate submitted twice, its fork undoing the old
      // answer's calls): waited for, then read again, where this save finds what that one did (nothing left to do, or
      // with the caller's `ifAt`, SESSION_MOVED). Never inside a tool handler: its own move may be the one in the way.
      const busy = error instanceof ConflictError && error.code === "MOVE_IN_PROGRESS" && !servedHandler(s.id);
      if (!busy || ctx.closing.aborted || !(await backoff.wait())) throw error;
      continue;
    }
    if (saved) return saved;
    read++;
  }
  throw new ConflictError(`the session's history kept changing while the list was saved (${SAVE_READS} tries): save it again`, "CONFLICT");
}

/** How many times a save reads the history again when another writer appended to it between its read and its write. */
const SAVE_READS = 5;

/**
 * One read of the history and the writes that bring it to `inputs`; null when, with nothing forked, another writer
 * (another app server saving the same chat, a retried request) appended after the read: the caller reads again, so
 * the same messages are never stored twice.
 */
async function syncOnce(s: SessionHandle, inputs: MessageInput[], options: SyncOptions): Promise<SaveResult | null> {
  // With the caller's `ifAt`, read only while it holds (else SESSION_MOVED, nothing written).
  const { branchId: readOn, messages: history } = await sessionEngine(s).run((ctx, ref) => currentHistory(ctx, ref, options.ifAt));
  // An edit, a fork or an append is made only from the branch read: the same save by another server (a double submit,
  // a retried request) that made it first moved the session on, and this one reads again instead of making it twice.
  // With the caller's `ifAt` (the same branch, and maybe a head), the session moving on refuses the save instead.
  const ifAt: IfAt = options.ifAt ?? { branchId: readOn };
  const again = options.ifAt === undefined;
  const stored = storedMessages(history);
  // No chat the app shows saves an empty list (a request holds its question): it is a page whose list was lost (a load
  // that failed, a reset state), and taken as a list that stops short it would fork an empty branch and undo every tool
  // call the chat made. Starting a chat over is a new session, or a rollback to a checkpoint at its start.
  if (inputs.length === 0 && stored.length > 0)
    throw new ValidationError(
      "messages",
      `is empty, while the chat holds ${stored.length} message(s): to start the chat over, create a new session ` +
        "(or roll back to a checkpoint at its start); nothing was written",
    );
  let kept = 0;
  while (kept < stored.length && kept < inputs.length && keeps(stored[kept]!.latest, inputs[kept]!, options)) kept++;
  if (restatesLast(stored, inputs, kept, options)) kept--;
  // The list ends at an earlier form of the last answer, which has gone on since: the request that continued it, sent
  // again as it was (a double submit, a retry). Nothing changed: taken for an edit, it would fork and undo the calls
  // the first request made, and the loop would make them again. Its messages end at that form: what the retry follows.
  if (kept === stored.length - 1 && inputs.length === stored.length) {
    const input = comparable(inputs[kept]!, options);
    const form = stored[kept]!.forms.findLast((f) => isDeepStrictEqual(comparable(f, options), input));
    if (form) return { kept: inputs.length, forked: null, continued: false, appended: 0, lastMessageId: form.id, branchId: readOn };
  }
  // The list ends at a stored message the history goes on from that only a request continuing it ends at (a tool
  // message answering approvals): that request sent again (a double submit, a retry). Taken for a
  // regenerate, it would fork and undo the calls the first request made (an approved call), and the loop would make
  // them again. Its messages end at that message: what the retry follows (a new answer lands there as a version).
  if (kept > 0 && kept === inputs.length && kept < stored.length && options.resends?.(inputs[kept - 1]!) === true)
    return { kept, forked: null, continued: false, appended: 0, lastMessageId: stored[kept - 1]!.latest.id, branchId: readOn };
  // Everything to be written is checked before the first write: a bad message leaves the history as it was.
  const { ctx } = sessionEngine(s);
  for (let i = kept; i < inputs.length; i++) messageFields(ctx, inputs[i], `messages[${i}]`);
  const anchor = kept > 0 ? stored[kept - 1]!.latest.id : null;
  if (!(await refuseOffLineage(s, readOn, history, anchor, kept, inputs, options))) return null;
  const changed = kept < stored.length && kept < inputs.length;
  const continued = changed && kept === stored.length - 1 && options.continues?.(stored[kept]!.latest, inputs[kept]!) === true;
  if (changed && !continued)
    refuseLaterCopies(
      stored[kept]!.forms,
      stored.slice(kept + 1).flatMap((m) => m.forms),
      kept,
      inputs,
      options,
    );
  const appending = inputs.length - kept - (changed && !continued ? 1 : 0);
  if (appending > ctx.limits.maxBatch) {
    throw new PayloadTooLargeError(
      "messages",
      `at most ${ctx.limits.maxBatch} new messages per save (got ${appending})`,
      ctx.limits.maxBatch,
    );
  }
  let forked: SaveResult["forked"] = null;
  const rest = inputs.slice(kept);
  // The list's last message as stored once this save is done: the last one written, else the last one kept.
  let last: Message | null = kept > 0 ? stored[kept - 1]!.latest : null;
  // The branch a truncating fork made: the list's last message stays on the parent branch, but the session (and the
  // page's next `ifAt`) is on the fork.
  let forkedOn: string | null = null;
  if (continued) {
    const next = rest[0]!;
    rest[0] = { ...next, metadata: { ...(next.metadata ?? {}), [CONTINUES]: stored[kept]!.latest.id } };
  } else if (changed) {
    // Before the form after the last call of the answer's the edited message still shows (the first form when it shows
    // none): the calls it shows stay applied, those it dropped and the forms after them go.
    const form = await formToEdit(s, readOn, stored[kept]!, inputs[kept]!, options);
    const input = rest.shift()!;
    const before = stored[kept]!.forms[stored[kept]!.forms.indexOf(form) - 1];
    const edit = before ? { ...input, metadata: { ...(input.metadata ?? {}), [CONTINUES]: before.id } } : input;
    const edited = await unlessMoved(s.edit(form.id, edit, { ifAt }), again);
    if (!edited) return null;
    last = edited.message;
    forked = "edit";
  } else if (kept < stored.length) {
    // Right after the last message kept: tool calls made after it (the dropped answer's) are undone too.
    const lastKept = kept > 0 ? stored[kept - 1]!.latest.id : null;
    const fork = await unlessMoved(
      sessionEngine(s).run((ctx, ref) => forkAfter(ctx, ref, lastKept, { ifAt })),
      again,
    );
    if (!fork) return null;
    forkedOn = fork.branch.id;
    forked = "truncate";
  }
  if (rest.length > 0) {
    // After an edit, right after the edited message on the branch it made, even once another handle moved the session
    // (a truncating fork leaves nothing to append); otherwise it appends where it read, or reads again.
    const written = forked
      ? await s.append(rest, { after: last!.id })
      : await unlessMoved(
          sessionEngine(s).run((ctx, ref) => appendAfter(ctx, ref, rest, history.at(-1)?.id ?? null, ifAt)),
          again,
        );
    if (!written) return null;
    last = written.at(-1)!;
  }
  // The current branch: the one written to, else the fork, else the one read (the list's last message may be on an
  // ancestor branch, as after a regenerate's fork; the page sends this as its next `ifAt`).
  const branchId = rest.length > 0 || forked === "edit" ? last!.branchId : (forkedOn ?? readOn);
  return { kept, forked, continued, appended: rest.length, lastMessageId: last?.id ?? null, branchId };
}

/**
 * Whether the list, all `kept` as stored, ends at the stored last answer with new metadata of its own (its usage, sent
 * with its end): that answer is then taken as going on, and its new form is stored as a longer one is (see `restates`).
 */
const restatesLast = (stored: StoredMessage[], inputs: MessageInput[], kept: number, options: SyncOptions): boolean =>
  options.continues !== undefined &&
  kept > 0 &&
  kept === stored.length &&
  kept === inputs.length &&
  restates(stored[kept - 1]!.latest, inputs[kept - 1]!, options);

/**
 * The form of a stored answer (saved after each step: its forms and the calls between them) an edit of it forks before:
 * the first form after the last of those calls the edited message still shows run, so that the calls it shows stay
 * applied (a text edit keeping its tool parts); the first form when it shows none of them (an approval denied after
 * another request granted it: the granted call and the forms after it go).
 */
async function formToEdit(
  s: SessionHandle,
  branchId: string,
  stored: StoredMessage,
  input: MessageInput,
  options: SyncOptions,
): Promise<Message> {
  const { forms } = stored;
  const named = new Set((options.shownCallsOf ?? options.callsOf)?.(input) ?? []);
  if (forms.length === 1 || named.size === 0) return forms[0]!;
  const first = forms[0]!.position;
  const latest = forms.at(-1)!.position;
  let last = -1;
  for (const t of await s.toolTrack({ branchId })) {
    if (t.position > first && t.position < latest && t.callId !== null && named.has(t.callId)) last = Math.max(last, t.position);
  }
  return forms.find((f) => f.position > last) ?? forms[0]!;
}

/**
 * A move's result, or null when it was refused because the session moved on since it was read (`SESSION_MOVED`), to be
 * read again (`again`); without `again` (the caller's own `ifAt` refused it) the refusal is thrown.
 */
async function unlessMoved<T>(move: Promise<T>, again: boolean): Promise<T | null> {
  try {
    return await move;
  } catch (error) {
    if (again && error instanceof ConflictError && error.code === "SESSION_MOVED") return null;
    throw error;
  }
}

/** Throws `ConflictError` `SESSION_MOVED` unless the session is at `ifAt` (its current branch, and head when given). */
async function checkAt(s: SessionHandle, ifAt: IfAt): Promise<void> {
  await sessionEngine(s).run((ctx, ref) => ctx.store.read((tx) => checkSessionAt(tx, ref, ifAt)));
}

/**
 * Whether stored message `stored` is `input` (or a form of it), as far as ids and calls tell. Ids first: a server that
 * names its answers (`generateMessageId`) names each response anew, and `loadChat` gives a message saved unnamed the id
 * of its entry, so the same id is the same message and two ids are two messages. With no id to compare, a message
 * naming tool calls is the one whose calls they are (their ids are the model's, one per call). Null when nothing tells:
 * an answer in the same words is all there is.
 */
function identified(stored: StoredMessage, input: MessageInput, options: SyncOptions): boolean | null {
  const id = stored.latest.clientId ?? stored.first.clientId;
  if (id !== null && input.clientId != null) return id === input.clientId;
  if (input.clientId != null && input.clientId === stored.first.id) return true;
  const m = stored.latest;
  return (options.callsOf?.({ role: m.role, content: m.content }).length ?? 0) > 0 ? true : null;
}

/** How sure it is that stored messages are the list's, from what `identified` tells of each: 0 sure, 2 least. */
function rank(told: (boolean | null)[]): number {
  if (told.includes(false)) return 2;
  return told.includes(true) ? 0 : 1;
}

/**
 * The last of `rest` as stored right after a message, if an earlier save stored them all there: `tails` is what follows
 * that message (each message after it, with those after it on its branch; see `appendAfterUnlessStored`). When a
 * branch ends at that message (`forks` false), the save has a place of its own to go: equal messages elsewhere are an
 * earlier answer to the same question (a regenerated answer that came out the same) unless ids or calls tell they are
 * these. With nowhere but a fork to go, equal messages following it are this list saved before (a double submit):
 * those ids or calls tell are these first, then the newest.
 * The list's last message may be an earlier form of a stored one (an answer that went on: see `forms`).
 */
function storedIn(tails: Message[][], rest: MessageInput[], forks: boolean, options: SyncOptions): Message | null {
  let best: { message: Message; rank: number } | null = null;
  for (const stored of tails) {
    // Grouped first: what follows may be the earlier forms of a message that went on (saved after each step).
    const tail = storedMessages(stored).slice(0, rest.length);
    if (tail.length < rest.length || !rest.slice(0, -1).every((m, i) => same(tail[i]!.latest, m, options))) continue;
    // With nowhere but a fork to go, the last may be an earlier form of a stored answer that went on (the request that
    // saved it after a step, sent again): stored already, as `syncOnce` finds a list ending at one; saved again, it
    // would fork a copy of the answer. With a place of its own, it is matched as stored now only (a regenerated answer
    // may equal the old one's first form).
    const last = tail.at(-1)!;
    const message = forks
      ? last.forms.findLast((f) => same(f, rest.at(-1)!, options))
      : same(last.latest, rest.at(-1)!, options)
        ? last.latest
        : undefined;
    if (!message) continue;
    const r = rank(rest.map((m, i) => identified(tail[i]!, m, options)));
    if (r === 0) return message;
    if (!forks) continue;
    if (!best || r < best.rank || (r === best.rank && message.createdAt > best.message.createdAt)) best = { message, rank: r };
  }
  return best?.message ?? null;
}

/**
 * The newest form continuing `formId` on a branch of its own, in `tails` (what follows that form): a branch whose first
 * message after it is marked as its later form (a step's save that forked after it, when other messages followed it).
 * Its latest form there, or null.
 */
export function continuationIn(tails: Message[][], formId: string, mine?: (form: Message) => boolean): Message | null {
  let best: Message | null = null;
  for (const tail of tails) {
    if (tail[0]?.metadata?.[CONTINUES] !== formId || (mine && !mine(tail[0]))) continue;
    const forms = storedMessages(tail)[0]!.forms;
    const end = mine ? forms.findIndex((f) => !mine(f)) : -1;
    const latest = (end === -1 ? forms : forms.slice(0, end)).at(-1)!;
    if (!best || latest.createdAt.getTime() > best.createdAt.getTime()) best = latest;
  }
  return best;
}

/** How many branches of its own an answer's forms are followed through (each a step's save that forked). */
export const MAX_FORM_FORKS = 64;

/**
 * The latest form of the answer `form` is a form of, following its later forms onto the branches forked after a form
 * (see `continuationIn`); `read` is given what follows each form read (for a check of the same choice later).
 */
export async function latestForm(
  s: SessionHandle,
  form: Message,
  read?: (of: Message, tails: Message[][]) => void,
  mine?: (form: Message) => boolean,
): Promise<Message> {
  for (let n = 0; n < MAX_FORM_FORKS; n++) {
    const tails = await sessionEngine(s).run((ctx, ref) => messagesAfter(ctx, ref, form.id));
    read?.(form, tails);
    const next = continuationIn(tails, form.id, mine);
    if (!next) return form;
    form = next;
  }
  return form;
}

/**
 * The stored message that an answer among `rest` goes on from, when a save of the same answer stored an earlier form
 * right after the message `rest` follows (`tails`, what follows that message): an answer saved after each step
 * (`onStepEnd`) grows there, on the branch holding its calls, wherever the session went meanwhile. The messages before
 * the earlier form must be the list's, and it must be this answer's (ids or calls tell). Ending its branch, it is the
 * form to go on from; followed by other messages there (another tab asked meanwhile), its latest form is (see
 * `latestForm`): the save goes on after it, on a branch ending there or forked right after it, so the answer's calls made
 * before stay on its branch (the same list saved again then writes nothing).
 */
async function earlierForm(s: SessionHandle, tails: Message[][], rest: MessageInput[], options: SyncOptions): Promise<Message | null> {
  const continues = options.continues;
  if (!continues) return null;
  for (const stored of tails) {
    const tail = storedMessages(stored);
    for (let i = 0; i < tail.length && i < rest.length; i++) {
      if (i > 0 && !same(tail[i - 1]!.latest, rest[i - 1]!, options)) break;
      if (rest[i]!.role !== "assistant" || identified(tail[i]!, rest[i]!, options) !== true) continue;
      const ends = i === tail.length - 1;
      const form = ends ? tail[i]!.latest : await latestForm(s, tail[i]!.latest);
      if (same(form, rest[i]!, options)) {
        // Stored already: where it ends its branch, as before (see `storedIn`); else it is followed to its latest form.
        if (!ends) return form;
        continue;
      }
      if (continues(form, rest[i]!)) return form;
    }
  }
  return null;
}

/**
 * A save whose new messages follow stored message `afterId` (the list's messages up to it are that message's lineage, as
 * stored): they are appended right after it on its own lineage (`append`'s `after`), wherever the session went
 * meanwhile. Nothing is forked and the current branch stays: a list whose messages before the new ones are not that
 * lineage's is refused (`ValidationError`, field `messages`). A list that ends there writes nothing, and so does one
 * whose new messages follow it already (the same list saved again: a double submit is stored once; see `storedIn`).
 * An answer whose earlier form follows it already (saved after a step) goes on from that form, on its branch.
 */
async function syncAfter(
  s: SessionHandle,
  inputs: MessageInput[],
  afterId: string,
  options: SyncOptions,
  redirected = false,
): Promise<SaveResult> {
  const after = await s.message(afterId);
  const stored = storedMessages(await s.history({ branchId: after.branchId, before: after.position + 1 }));
  const kept = stored.length;
  let prefix = 0;
  while (prefix < kept && prefix < inputs.length && keeps(stored[prefix]!.latest, inputs[prefix]!, options)) prefix++;
  const restated = restatesLast(stored, inputs, prefix, options);
  if (restated) prefix--;
  // The stored message may have gone on in the list (a client-side tool's output added to the answer): its longer form.
  const continued =
    prefix === kept - 1 && inputs.length >= kept && options.continues?.(stored[kept - 1]!.latest, inputs[kept - 1]!) === true;
  // An answer's end metadata once the chat went on after it on its branch (another tab asked on): stored after it, it
  // would fork a branch holding only that form, a false version of what followed. The answer is kept as it is.
  if (restated && continued && inputs.length === kept && (await followedOnItsBranch(s, after)))
    return { kept, forked: null, continued: false, appended: 0, lastMessageId: after.id, branchId: after.branchId };
  if (prefix < kept && !continued)
    throw new ValidationError(
      "messages",
      `do not begin with the stored history up to message ${JSON.stringify(afterId)} (they differ at message ${prefix}): ` +
        "save the list without `after`, or give the message it goes on from",
    );
  const rest = inputs.slice(continued ? kept - 1 : kept);
  if (continued) rest[0] = { ...rest[0]!, metadata: { ...(rest[0]!.metadata ?? {}), [CONTINUES]: after.id } };
  if (rest.length === 0) return { kept, forked: null, continued: false, appended: 0, lastMessageId: after.id, branchId: after.branchId };
  // An earlier form of the answer stored after the message already (the save of an earlier step): it goes on from there.
  if (!redirected && options.continues && rest.some((m) => m.role === "assistant")) {
    const form = await earlierForm(s, await sessionEngine(s).run((ctx, ref) => messagesAfter(ctx, ref, after.id)), rest, options);
    if (form) return syncAfter(s, inputs, form.id, options, true);
  }
  // Looked for in the unit that would append: the same list saved by several servers at once is stored once.
  const out = await sessionEngine(s).run((ctx, ref) =>
    appendAfterUnlessStored(
      ctx,
      ref,
      rest,
      after.id,
      (tails, forks) => storedIn(tails, rest, forks, options),
      answerCallKeys(rest, options),
      options.ifAt,
    ),
  );
  if ("stored" in out) {
    const saved = out.stored;
    return { kept: kept + rest.length, forked: null, continued: false, appended: 0, lastMessageId: saved.id, branchId: saved.branchId };
  }
  const last = out.written.at(-1)!;
  return {
    kept: continued ? kept - 1 : kept,
    forked: null,
    continued,
    appended: rest.length,
    lastMessageId: last.id,
    branchId: last.branchId,
  };
}

/** Whether a message follows `m` on its own branch (another tab's question after the answer). */
async function followedOnItsBranch(s: SessionHandle, m: Message): Promise<boolean> {
  const tails = await sessionEngine(s).run((ctx, ref) => messagesAfter(ctx, ref, m.id));
  return tails.some((tail) => tail[0]?.branchId === m.branchId);
}
