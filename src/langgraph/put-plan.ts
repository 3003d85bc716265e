// ForkpointSaver's put planning: where a put goes on from, and what it writes there.
// It goes on from a stored parent's forkpoint checkpoint, a synthesized one's point, or the thread's empty start; it
// writes the messages its list appends, or departs from a stored message (an edit), each checked before anything moves.
import { ConflictError, NotFoundError } from "../models/errors.js";
import type { JsonValue } from "../models/json.js";
import type { MessageInput } from "../models/types.js";
import type { BranchRow, EntryRow, LgCheckpointRow, LgThreadRow, Step, Tx } from "../store/port/index.js";
import {
  GENESIS_HASH,
  canonicalJson,
  entryAt,
  headOf,
  lineageMessages,
  messageFields,
  ownedSession,
  toMessage,
  type EngineContext,
  type EntryFields,
  type SessionRef,
} from "../sessions/langgraph-bridge.js";
import { toMessageInputs } from "./caused-calls.js";
import { fromMessage } from "./messages.js";
import { extendsMirror, fieldsOf, mirrorOf, type Mirror, type MirrorItems } from "./mirror-cache.js";
import { serializeItems, versionKey, type SaverParts } from "./saver-parts.js";
import { rowVersions } from "./channel-values.js";
import type { RunMark } from "./run-calls.js";
import { refuseMovedParent, runStopped, targetOf, type Target } from "./moved-parent.js";
import { resolveSynthesized } from "./thread-head.js";
import { departure, keptByTrim } from "./trimmed-list.js";

/** Where a put lands (the checkpoint it goes on from, and the message where its list departs), and what it writes. */
export interface Landing {
  /** Where the put's parent sits (the thread's empty start when it has none). */
  target: Target;
  /** The first stored message the new list departs from: the put is an edit of it. Null: it extends the target's. */
  editAt: string | null;
  /** The messages to append (the first one replaces `editAt`'s), as given and as validated entry fields. */
  append: MessageInput[];
  fields: EntryFields[];
  /** The messages channel's version that the session's messages are at this checkpoint (null: none). */
  messagesVersion: string | null;
  /** The items now mirrored and their field values (for the cache); null when the channel did not change or is stored as a value. */
  mirrored: MirrorItems | null;
  /** The new list drops messages (a trim): it is stored as a value, and the session keeps every message. */
  asValue: boolean;
}

/** A put's parent: where it sits, and the messages channel's version there. */
export interface ParentAt {
  target: Target;
  messagesVersion: string | null;
  /**
   * A synthesized parent's base whose messages channel is no list of the session's messages (a trimmed list stored
   * as a value, or LangGraph's deltas): the parent's list is that base's, then the session's messages since.
   */
  valueBase?: LgCheckpointRow;
}

/** A put, serialized and checked, before it lands. */
export interface PreparedPut {
  /** The user whose thread it is (from the run's config, else the saver's). */
  userId: string;
  threadId: string;
  ns: string;
  parentId: string | null;
  checkpointId: string;
  /** The messages channel's new list (null: the channel did not change). */
  items: unknown[] | null;
  /** The channel's unchanged list (serialized as put was called) and version, when the parent is synthesized. */
  unchanged: { value: Promise<[string, Uint8Array]>; version: string } | null;
  /** The items after the mirror, taken as put was called, when it goes on from the mirrored checkpoint. */
  early: NewItems | undefined;
  /** The whole list's field values and serialization, taken as put was called (when its new items alone were not). */
  whole: { mirrored: MirrorItems; serialized: Promise<JsonValue[]> } | null;
  messagesVersion: string | null;
  /** Channel values other than the messages, by version. */
  blobs: { channel: string; version: string; type: string; value: Buffer }[];
  /** The forkpoint checkpoint's own metadata (JSON). */
  cpMetadata: string;
  /** The saver row's serialized checkpoint (without channel values) and metadata. */
  lg: Pick<LgCheckpointRow, "type" | "checkpoint" | "metadataType" | "metadata">;
  /** A subgraph's check of its parent run (see parent-run-guard.ts), run again where the put is written at the head. */
  guard: ((tx: Tx) => Step<void>) | null;
  /**
   * The input of a run LangGraph started from the thread's latest checkpoint (none addressed by id): it goes on from
   * the head the run read, as a step of a run under way goes on from its last checkpoint.
   */
  fromHead: boolean;
  /** The run that made the put, when the saver saw it start (`run-calls.ts`): its nodes' calls are told apart. */
  run: RunMark | undefined;
  /**
   * The run's durability is "exit": its one put comes after every call it made, and after those of the runs before it
   * (each recorded before its run's messages), so only the run's own calls are the step's.
   */
  exit: boolean;
  /** A subgraph's put: the root graph's checkpoint its step runs from (LangGraph's `metadata.parents`). */
  rootStep: string | undefined;
}

/** A put's new messages (those after the thread's mirror), taken as the put was called. */
export interface NewItems {
  /** The mirror they extend: if the thread's mirror is another one by the time the put lands, they are taken again. */
  mirror: Mirror;
  added: unknown[];
  fields: unknown[][];
  /** Their serialization; null when the serializer refused one (the general path reports it). */
  serialized: Promise<JsonValue[] | null>;
}

/**
 * Works out where a put lands and which messages it appends, comparing the new list with the messages at the parent
 * checkpoint (none at the empty start), and validates them. Nothing moves here: `PutWriter.forkAndWrite` forks the session
 * (an edit where the new list departs from the old one, else a rollback when the parent is not the head) in the
 * transaction that writes the put. What this reads cannot change meanwhile: a checkpoint's lineage is immutable.
 */
export async function land(
  parts: SaverParts,
  ctx: EngineContext,
  ref: SessionRef,
  thread: LgThreadRow,
  put: PreparedPut,
): Promise<Landing> {
  const { parentId, checkpointId, items, messagesVersion } = put;
  const store = ctx.store;
  const parent = await store.read((tx) => landUnit(tx, parts, ref, thread, put));
  const target = parent.target;
  let append: MessageInput[] = [];
  let editAt: string | null = null;
  let outcome: Pick<Landing, "messagesVersion" | "mirrored" | "asValue">;
  if (items === null) {
    // The messages channel unchanged: the parent's messages (none at the start) are this checkpoint's; a parent on a
    // trimmed base has its list stored here, as a value.
    const value = parent.valueBase && put.unchanged && !(await rowVersions(parts, parent.valueBase)).deltaChannels.has(parts.messages);
    outcome = value
      ? { messagesVersion: null, mirrored: null, asValue: true }
      : { messagesVersion: parent.messagesVersion, mirrored: null, asValue: false };
  } else {
    const cached = parts.cache.get(ref.id);
    if (cached && cached.headHash === target.headHash && extendsMirror(cached, items)) {
      // The same objects as the last put (LangGraph keeps them in its channel): only the new ones are serialized.
      // As put was called, when it took them then: the new items alone, or the whole list.
      const n = cached.items.length;
      const added = items.slice(n);
      const { early, whole } = put;
      const taken =
        early?.mirror === cached
          ? { fields: early.fields, serialized: await early.serialized }
          : whole
            ? { fields: whole.mirrored.fields.slice(n), serialized: (await whole.serialized).slice(n) }
            : null;
      // Not taken then, or refused by the serializer then (serialized again, it says which).
      append = toMessageInputs(taken?.serialized ?? (await serializeItems(parts, added)));
      const fields = taken?.fields ?? added.map(fieldsOf);
      outcome = {
        messagesVersion,
        mirrored: { items: [...cached.items, ...added], fields: [...cached.fields, ...fields] },
        asValue: false,
      };
    } else {
      // As put was called, when it took them then.
      const mirrored = put.whole?.mirrored ?? mirrorOf(items);
      const serialized = await (put.whole?.serialized ?? serializeItems(parts, items));
      const old = await store.read((tx) => lineageMessages(tx, target.branchId, toMessage, target.position));
      const stored = old.map(fromMessage);
      let common = 0;
      while (common < old.length && common < items.length && canonicalJson(stored[common]!) === canonicalJson(serialized[common])) common++;
      // How many of the list's first items keep stored messages: a list that drops some of them (`keptByTrim`) is a
      // trim, one that keeps them all (LangGraph may read one back without its undefined fields) goes on after them.
      const kept = common === old.length || common === items.length ? common : keptByTrim(stored, serialized);
      if (kept >= 0 && kept < old.length) {
        // A trim is no edit: the session keeps every message and appends the new ones; the list is stored as a
        // value, as LangGraph's own savers store it.
        append = toMessageInputs(serialized.slice(kept));
        outcome = { messagesVersion: null, mirrored: null, asValue: true };
      } else if (kept >= 0) {
        append = toMessageInputs(serialized.slice(kept));
        outcome = { messagesVersion, mirrored, asValue: false };
      } else {
        // An edit, at the stored message the list departs from (a trimmed list's too: not at the thread's first
        // message, which would undo every earlier turn and call). A list holding fewer messages before it than the
        // session (a trimmed one) is stored as a value, as a trim is.
        const { at, from } = departure(stored, serialized);
        editAt = old[at]!.id;
        append = toMessageInputs(serialized.slice(from));
        outcome = at === from ? { messagesVersion, mirrored, asValue: false } : { messagesVersion: null, mirrored: null, asValue: true };
      }
    }
  }
  // Every message is checked before the session moves: a refused one leaves the database as it was.
  const fields = validateMessages(parts, ctx, append, items === null ? 0 : items.length - append.length);
  return { target, editAt, append, fields, ...outcome };
}

function* landUnit(tx: Tx, parts: SaverParts, ref: SessionRef, thread: LgThreadRow, put: PreparedPut) {
  const { checkpointId, parentId } = put;
  const continuing = goesOnFromHead(put);
  const session = yield* ownedSession(tx, ref.id, ref.userId);
  yield* refuseTakenId(tx, ref.id, thread.threadId, checkpointId);
  const current = (yield* tx.getBranch(session.currentBranchId))!;
  const parent = yield* parentAt(tx, thread, parentId, current);
  if (parentId !== null) yield* refuseMovedParent(tx, session.id, current, thread, parent.target, continuing, put.run);
  if (continuing && parentId !== null) {
    const after = yield* afterStepCalls(tx, parts, session.id, thread, parent.target, put);
    if (after) return { ...parent, target: { ...parent.target, after } };
  }
  return parent;
}

/**
 * The head of `target`'s branch when only tool calls and state changes follow `target` there (a step's nodes journal
 * theirs after its parent's put, and nothing landed on the branch since); else undefined. A fork from the parent
 * would leave them out, and the other run's fork that made it needed may have undone them (two runs of one thread
 * forking side by side): the fork goes on after them, which replays what was undone.
 * Never after another run's calls, nor after another run's messages (two runs of the thread at once): the fork goes on
 * after the calls before the first of them that the put's run knows (`stepCalls`), or from the parent. Nor after a
 * LangGraph checkpoint stored since the parent (`landedAfterParent`: an old wait resumed again from the history): the
 * calls after it are the later steps' of the run that went on from the parent then, which this run makes again.
 */
function* afterStepCalls(
  tx: Tx,
  parts: SaverParts,
  sessionId: string,
  thread: LgThreadRow,
  target: Target,
  put: PreparedPut,
): Step<{ position: number; headHash: string } | undefined> {
  const branch = yield* tx.getBranch(target.branchId);
  if (!branch) return undefined;
  const head = yield* headOf(tx, branch);
  if (head.position <= target.position) return undefined;
  const at = yield* entryAt(tx, branch, target.position);
  if ((at?.hash ?? GENESIS_HASH) !== target.headHash) return undefined;
  if (put.exit && put.run && freshStep(put.run))
    return yield* ownCallsEnd(tx, parts, sessionId, branch, target.position, head.position, put.run);
  // The step's own calls end where a checkpoint stored since the parent sits, if one does before the head.
  const bound = yield* landedAfterParent(tx, sessionId, target, branch, head.position);
  const last = bound === undefined ? undefined : yield* entryAt(tx, branch, bound);
  const end = bound === undefined ? head : { position: bound, hash: last?.hash ?? GENESIS_HASH, msgCount: last?.msgCount ?? 0 };
  const messagesAfter = (at?.msgCount ?? 0) !== end.msgCount;
  if (put.run && (messagesAfter || bound !== undefined || parts.runs.anyForeign(sessionId, put.run, put.fromHead))) {
    const point = yield* stepCalls(tx, parts, sessionId, thread, branch, target.position, head.position, put, bound);
    if (point) return point.position > target.position ? point : undefined;
  }
  if (messagesAfter || end.position <= target.position) return undefined;
  return { position: end.position, headHash: end.hash };
}

/**
 * Whether `run` was served nothing of a step stopped at the checkpoint it went on from (no wait, failure, result or
 * answer there): it starts a new step (an input), so the calls after that checkpoint are no step's it resumes.
 */
const freshStep = (run: RunMark) => run.resumed.size === 0 && run.given.size === 0 && run.held.size === 0;

/**
 * Under durability "exit", a run starting a new step (`freshStep`): the end of the calls `run` journaled right after `from` on `branch` (up to `to`), where its
 * one put goes on after them; undefined when none follows `from`. A call of another run there (the run before it,
 * whose messages landed after its calls) is no call of this run's step: a time-travel fork past it would keep it.
 */
function* ownCallsEnd(
  tx: Tx,
  parts: SaverParts,
  sessionId: string,
  branch: BranchRow,
  from: number,
  to: number,
  run: RunMark,
): Step<{ position: number; headHash: string } | undefined> {
  const walked = yield* walkAfter(tx, branch, from, to, (entry) => entry?.kind !== "tool" || !parts.runs.own(sessionId, entry.id, run));
  return walked.last && { position: walked.last.position, headHash: walked.last.entry.hash };
}

/**
 * Walks `branch`'s entries after `from`, up to `to`: the first position whose entry (undefined: none there) `stop`
 * takes, if any, and the last entry walked before it.
 */
function* walkAfter(
  tx: Tx,
  branch: BranchRow,
  from: number,
  to: number,
  stop: (entry: EntryRow | undefined) => boolean,
): Step<{ stoppedAt: number | undefined; last: { position: number; entry: EntryRow } | undefined }> {
  let last: { position: number; entry: EntryRow } | undefined;
  for (let position = from + 1; position <= to; position++) {
    const entry = yield* entryAt(tx, branch, position);
    if (stop(entry)) return { stoppedAt: position, last };
    if (entry) last = { position, entry };
  }
  return { stoppedAt: undefined, last };
}

/**
 * The first position on `branch`'s lineage, from `target`'s (a put's parent) and before `before`, of a LangGraph
 * checkpoint stored after the parent's (after a synthesized parent's point: past it) that its own branch's entries
 * follow there; undefined when none is. A run went on from the parent there (the thread resumed an old wait from its
 * history again): what follows that checkpoint is that run's later steps, not the step a put going on from the parent
 * goes on after.
 */
export function* landedAfterParent(tx: Tx, sessionId: string, target: Target, branch: BranchRow, before: number): Step<number | undefined> {
  const from = target.fpCheckpointId === null ? target.position + 1 : target.position;
  if (from >= before) return undefined;
  const parent = target.fpCheckpointId === null ? undefined : yield* tx.getCheckpoint(target.fpCheckpointId);
  if (target.fpCheckpointId !== null && !parent) return undefined;
  const seq = parent?.seq ?? -1;
  // Only one with its own branch's entries after it: those at a branch's end (where a move forked the next segment)
  // are followed by entries someone appended after that move, not by that run's.
  for (const segment of yield* tx.lineage(branch.id, before)) {
    if (segment.upTo <= from) continue;
    const at = yield* tx.langgraph.firstLandedSince(sessionId, segment.branchId, seq, Math.max(from, segment.after), segment.upTo - 1);
    if (at !== undefined) return at;
  }
  return undefined;
}

/**
 * Where the put's step must fork after `from` (its parent's point) on `branch`, up to `to`, when another run of the
 * thread went on there beside its run (`RunCalls.foreign`): right before the first call of that run, or before the
 * first message after `from` (another run's put wrote it) when the calls before it are all ones the put's run knows
 * (its own, or ones made before it started or whose results it was served). Undefined when no such point is there
 * (or the put's run is not told apart). Refuses (`SESSION_MOVED`) a step with a call of its own after that point: a
 * fork there undoes it, a fork after it keeps the other run's call, whose result the step's state does not hold (two
 * resumes of one waiting thread sent at once: the step landing first keeps its own calls; the other is stopped, its
 * calls undone off the thread's head). Entries after `bound` (a LangGraph checkpoint stored since the parent,
 * `landedAfterParent`) are cut at as a message is: they are the later steps' of the run that went on from there.
 */
export function* stepCalls(
  tx: Tx,
  parts: SaverParts,
  sessionId: string,
  thread: LgThreadRow,
  branch: BranchRow,
  from: number,
  to: number,
  put: PreparedPut,
  bound = Infinity,
): Step<{ position: number; headHash: string } | undefined> {
  const run = put.run;
  if (!run) return undefined;
  const beside = parts.runs.anyForeign(sessionId, run, put.fromHead);
  let point: { position: number; headHash: string } | undefined;
  let known = true;
  let previous = yield* entryAt(tx, branch, from);
  for (let position = from + 1; position <= to; position++) {
    const entry = yield* entryAt(tx, branch, position);
    if (!entry) break;
    if (point === undefined) {
      const foreign = entry.kind === "tool" && parts.runs.foreign(sessionId, entry.id, run, put.fromHead);
      if (foreign || entry.kind === "message" || position > bound) {
        point = { position: position - 1, headHash: previous?.hash ?? GENESIS_HASH };
        // A message (or the bound) first, and no call of another run after it: the calls before it are kept if the run
        // knows them.
        if (!foreign && !(beside && (yield* foreignAfter(tx, parts, sessionId, branch, position, to, run, put.fromHead))))
          return known && position - 1 > from ? point : undefined;
      } else if (!(entry.kind === "tool" && parts.runs.known(sessionId, entry.id))) known = false;
    } else if (entry.kind === "tool" && parts.runs.own(sessionId, entry.id, run)) {
      throw runStopped(thread, "another run of the thread made tool calls");
    }
    previous = entry;
  }
  return point;
}

/** Whether a call of another run beside `run` follows `from` on `branch`, up to `to`. */
function* foreignAfter(
  tx: Tx,
  parts: SaverParts,
  sessionId: string,
  branch: BranchRow,
  from: number,
  to: number,
  run: RunMark,
  input: boolean,
): Step<boolean> {
  const foreign = (entry: EntryRow | undefined) => entry?.kind === "tool" && parts.runs.foreign(sessionId, entry.id, run, input);
  return (yield* walkAfter(tx, branch, from, to, foreign)).stoppedAt !== undefined;
}

/**
 * Whether a put goes on from where its run left the session: a step of a run under way (LangGraph's `source:
 * "loop"`), whose parent is the run's own last put, or the input of a run from the thread's head (`fromHead`).
 */
export function goesOnFromHead(put: PreparedPut): boolean {
  return put.fromHead || (JSON.parse(put.cpMetadata) as { langgraph?: { source?: unknown } }).langgraph?.source === "loop";
}

/**
 * The items of `items` after the thread's mirror (when `items` begins with it), with their field values and their
 * serialization, both taken now: the serializer works synchronously, so they are what the items are at this call.
 */
export function serializeNew(parts: SaverParts, sessionId: string, items: unknown[], parentId: string | null): NewItems | undefined {
  const mirror = parts.cache.get(sessionId);
  if (!mirror || mirror.checkpointId !== parentId || !extendsMirror(mirror, items)) return undefined;
  const added = items.slice(mirror.items.length);
  const fields = added.map(fieldsOf);
  return { mirror, added, fields, serialized: serializeItems(parts, added).catch(() => null) };
}

/** The messages as entry fields, each checked against the limits; `offset` is the first one's index in the channel. */
export function validateMessages(parts: SaverParts, ctx: EngineContext, messages: MessageInput[], offset: number): EntryFields[] {
  return messages.map((m, i) => messageFields(ctx, m, `checkpoint.channel_values.${parts.messages}[${offset + i}]`));
}

/**
 * Where a put's parent sits, in a unit of work: a stored checkpoint's forkpoint checkpoint, a synthesized one's point
 * (`current`: the session's current branch, where it is looked for first), or the thread's empty start when the put
 * has no parent (or one the thread does not know).
 */
export function* parentAt(tx: Tx, thread: LgThreadRow, parentId: string | null, current: BranchRow): Step<ParentAt> {
  if (parentId !== null) {
    const row = yield* tx.langgraph.getCheckpoint(thread.sessionId, parentId);
    if (row) return { target: targetOf((yield* tx.getCheckpoint(row.fpCheckpointId))!), messagesVersion: row.messagesVersion };
    const synth = yield* resolveSynthesized(tx, thread.sessionId, parentId, current);
    if (synth) {
      const { branchId, position, hash } = synth.point;
      const messagesVersion = synth.messagesVersion === undefined ? null : versionKey(synth.messagesVersion);
      const target = { fpCheckpointId: null, branchId, position, headHash: hash };
      return synth.base?.messagesVersion === null ? { target, messagesVersion, valueBase: synth.base } : { target, messagesVersion };
    }
    // A parent the thread no longer has (pruned, or never its): going on from the empty start would undo every call
    // of the thread's head. A thread without a checkpoint yet (its writes came first) starts there, as before.
    if (yield* tx.langgraph.getCheckpoint(thread.sessionId)) throw new NotFoundError("checkpoint", parentId);
  }
  return { target: targetOf((yield* tx.getCheckpoint(thread.startCheckpointId))!), messagesVersion: null };
}

/** A LangGraph checkpoint id is written once per thread. */
export function* refuseTakenId(tx: Tx, sessionId: string, threadId: string, checkpointId: string): Step<void> {
  if (yield* tx.langgraph.getCheckpoint(sessionId, checkpointId)) {
    throw new ConflictError(`thread ${threadId} already has a checkpoint ${checkpointId}`, "CHECKPOINT_EXISTS");
  }
}
