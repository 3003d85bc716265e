// The answer forms a loop's next call may follow: the question, or the latest stored form of the loop's own answer.
import { sessionEngine, type SessionHandle } from "../sessions/session-handle.js";
import { messagesAfter } from "../sessions/writes/append-where.js";
import { followedCheck, type FollowedRead } from "./followed-check.js";
import type { Message } from "../models/types.js";
import { formCallKeys, namesMine } from "./own-call-keys.js";
import { continuationIn, latestForm, storedMessages, type StoredMessage } from "./sync-history.js";

/** What a loop's next call may follow (see `answerForms`), and how to tell, given what follows the question then, whether it still would. */
export interface AnswerForms {
  ids: string[];
  /** Absent when the call follows the question whatever is stored (no call made yet: no answer of this loop). */
  followed?: ReturnType<typeof followedCheck>;
}

/**
 * The messages a loop's next call may follow, the one it follows first: `after` (its question), or the latest form of
 * the loop's answer stored right after it (saved in `onStepEnd`) once there is one. Landing after the question, the
 * call would find no branch ending there and fork one without the answer; after the answer's form it lands with the
 * answer, on its branch. The form must be the first message after the question on a branch that is the wrapped one or
 * forked from it at or after the question (a save, or the loop's first call, that forked when another tab wrote: its
 * branch holds this loop's calls; right at the question when the tab wrote before the first step's save), and name a
 * call these tools or the loop's earlier steps made (`mine`): an earlier answer on another branch (a regenerate's old
 * one) is not this loop's, whatever ids it names. Other messages may follow it there (another tab asked after a step's
 * save): the call then follows the answer's latest form, on the branch a later step's save or call forked right after
 * a form (see `latestForm`), or forks one there itself, keeping the loop's calls made before. The others (the question,
 * the answer's earlier forms) are what the same call made by the same request before (a request sent again) may have
 * followed: its request id was applied with one of them.
 * The choice is made from a read: a step's save may land between it and the call's journal, which then would follow a
 * form no longer last (and fork a branch without the answer). `followed` lets the journal's own unit tell whether the
 * same choice still holds there (it refuses the call otherwise, and the caller reads again).
 */
export async function answerForms(s: SessionHandle, onBranch: string, after: string, mine: ReadonlySet<string>): Promise<AnswerForms> {
  if (mine.size === 0) return { ids: [after] };
  const tails = await sessionEngine(s).run((ctx, ref) => messagesAfter(ctx, ref, after));
  // As read: the journal's unit judges what it finds by the same calls.
  const known = new Set(mine);
  // Whether each branch (other than the wrapped one) that holds a candidate form may hold this loop's answer.
  const places = new Map<string, boolean>();
  let question: Message | null = null;
  let branches: Awaited<ReturnType<SessionHandle["branches"]>> | null = null;
  for (const tail of tails) {
    const form = answerIn(tail, known)?.latest;
    if (!form || form.branchId === onBranch || places.has(form.branchId)) continue;
    question ??= await s.message(after);
    branches ??= await s.branches();
    const branch = branches.find((b) => b.id === form.branchId);
    // Forked right at the question too: the first step's save (or call) forked there when another tab wrote before it;
    // from the question's own branch when the wrapped one begins after it (a regenerate's fork, sent twice at once).
    const parent = branch?.parentId;
    places.set(
      form.branchId,
      branch !== undefined && (parent === onBranch || parent === question.branchId) && branch.forkPosition >= question.position,
    );
  }
  const found = formsIn(tails, known, onBranch, (branchId) => places.get(branchId) ?? false)!;
  const ids = found.map((forms) => forms.at(-1)!.id);
  for (const forms of found) ids.push(...forms.slice(0, -1).map((f) => f.id));
  const newest = found[0]?.at(-1);
  // A branch not judged here (forked since the read) cannot be told: the call reads again.
  const holds = (now: Message[][]) => {
    const again = formsIn(now, known, onBranch, (branchId) => places.get(branchId));
    return again !== null && (again[0]?.at(-1)!.id ?? after) === (newest?.id ?? after);
  };
  const reads: FollowedRead[] = [{ of: after, holds }];
  if (!newest) return { ids: [after], followed: followedCheck(reads) };
  // Followed by other messages on its branch (another tab asked meanwhile), the answer went on, if at all, on a branch
  // forked right after that form (see `latestForm`): the call follows its latest form there, with the same check of each.
  const chain: Message[] = [];
  // Only through forms naming the loop's own calls: another request's went on from a form both share.
  const mineOnly = (form: Message) => ownForm(form, known);
  const latest = await latestForm(
    s,
    newest,
    (of, tails) => {
      const next = continuationIn(tails, of.id, mineOnly)?.id ?? null;
      reads.push({ of: of.id, holds: (now) => (continuationIn(now, of.id, mineOnly)?.id ?? null) === next });
      chain.push(of);
    },
    mineOnly,
  );
  const others = [
    ...chain
      .slice(0, -1)
      .reverse()
      .map((f) => f.id),
    ...ids.slice(1),
  ];
  return {
    ids: latest.id === newest.id ? [newest.id, after, ...ids.slice(1)] : [latest.id, after, ...others],
    followed: followedCheck(reads),
  };
}

/**
 * The answer `tail` (what follows the question on a branch) holds, if it may be the loop's: its first message, naming a
 * call of `mine` (other messages may follow it there: another tab's question, asked after a step's save).
 */
function answerIn(tail: Message[], mine: ReadonlySet<string>): StoredMessage | null {
  const answer = storedMessages(tail)[0];
  if (!answer || answer.first.role !== "assistant") return null;
  // Its forms up to the first naming a call the loop did not make: later ones are another request's answering the same
  // (a request sent again whose model went on otherwise), which went on from the last form both share.
  const end = answer.forms.findIndex((form) => !ownForm(form, mine));
  const forms = end === -1 ? answer.forms : answer.forms.slice(0, end);
  const latest = forms.at(-1);
  if (!latest || !formCallKeys(latest).some((call) => namesMine(call, mine))) return null;
  return { first: answer.first, latest, forms };
}

/** Whether every call a form of an answer names is one of `mine` (a form of this loop's answer names only its calls). */
const ownForm = (form: Message, mine: ReadonlySet<string>): boolean => formCallKeys(form).every((call) => namesMine(call, mine));

/**
 * The forms of the loop's answer in `tails` (each answer's forms, from the first to the latest), the newest latest form
 * first: of the answers in them (see `answerIn`), those on the wrapped branch or on a branch `place` accepts; null when
 * `place` cannot tell of a branch (undefined).
 */
function formsIn(
  tails: Message[][],
  mine: ReadonlySet<string>,
  onBranch: string,
  place: (branchId: string) => boolean | undefined,
): Message[][] | null {
  const found: Message[][] = [];
  for (const tail of tails) {
    const answer = answerIn(tail, mine);
    if (!answer) continue;
    if (answer.latest.branchId !== onBranch) {
      const ok = place(answer.latest.branchId);
      if (ok === undefined) return null;
      if (!ok) continue;
    }
    found.push(answer.forms);
  }
  // The newest latest form first.
  return found.sort((x, y) => y.at(-1)!.createdAt.getTime() - x.at(-1)!.createdAt.getTime());
}
