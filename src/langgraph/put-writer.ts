// ForkpointSaver's writing: a put's rows landed in one transaction, and what the saver keeps of them once committed.
// Its messages, the forkpoint checkpoint, the LangGraph row and blobs are written at the session's head in one
// transaction, or in the transaction that finishes the fork the put needs; a thread's session is started on its first put.
import type { RunnableConfig } from "@langchain/core/runnables";
import type { Checkpoint as CheckpointInfo, MessageInput } from "../models/types.js";
import type { BranchRow, EntryRow, LgThreadRow, LineageSegment, SessionRow, Step, Tx } from "../store/port/index.js";
import {
  GENESIS_HASH,
  afterMoves,
  currentToWrite,
  edit,
  entryAt,
  forkAtPoint,
  headOf,
  ownedCurrent,
  rollback,
  toCheckpoint,
  writeCheckpoint,
  writeMessages,
  type EngineContext,
  type EntryFields,
  type Head,
  type SessionRef,
  type WithinMove,
} from "../sessions/langgraph-bridge.js";
import { toMessageInputs } from "./caused-calls.js";
import type { Mirror, MirrorItems } from "./mirror-cache.js";
import {
  goesOnFromHead,
  land,
  landedAfterParent,
  parentAt,
  refuseTakenId,
  serializeNew,
  stepCalls,
  validateMessages,
  type Landing,
  type PreparedPut,
} from "./put-plan.js";
import { refuseMovedParent } from "./moved-parent.js";
import { forkedMetadata } from "./saver-fork.js";
import { serializeItems, type SaverParts } from "./saver-parts.js";
import { createThread, findThread } from "./threads.js";
import { markPutOn } from "./put-on.js";
import { memoryParentNs } from "./subgraph-memory.js";

/** What a put's transaction wrote, for what the saver keeps and the events. */
export interface Written {
  checkpoints: CheckpointInfo[];
  headHash: string;
  from: Head;
  wrote: { segments: LineageSegment[] | null; rows: EntryRow[] };
}

/** `writeAtHead`'s answer when the put goes on from elsewhere than the session's head, or edits a message. */
const FORK = Symbol("fork");

/** Lands puts and creates threads, for one saver. */
export class PutWriter {
  readonly #parts: SaverParts;

  constructor(parts: SaverParts) {
    this.#parts = parts;
  }

  /**
   * The common put, in one write transaction: the thread's session is known, its head is the parent checkpoint, and
   * the new list begins with the items this saver mirrored there (the same objects): only the new ones are written.
   * Returns null, having written nothing, when any of that is not so (the general path then lands the put).
   */
  async putAtHead(ctx: EngineContext, sessionId: string, put: PreparedPut): Promise<RunnableConfig | null> {
    const { early } = put;
    const store = ctx.store;
    const cached = put.items === null ? undefined : this.#parts.cache.get(sessionId);
    // The new items as serialized when put was called, if the thread's mirror is still the one they extend.
    const news =
      put.items === null
        ? undefined
        : early && early.mirror === cached
          ? early
          : cached && serializeNew(this.#parts, sessionId, put.items, put.parentId);
    if (put.items !== null && !news) return null;
    const added = news?.added ?? [];
    const addedFields = news?.fields ?? [];
    const serialized = news ? await news.serialized : [];
    // Refused items: the general path reports it, after the checks that come first there (a taken checkpoint id).
    if (serialized === null) return null;
    const append = toMessageInputs(serialized);
    const parts = this.#parts;
    const written = await afterMoves(ctx, { id: sessionId }, () =>
      store.write({ sessionId }, (tx) => putAtHeadUnit(tx, put, sessionId, cached, parts, ctx, append)),
    );
    if (!written) return null;
    // The write committed: the mirror (the saver's own arrays, never LangGraph's) grows in place; copying it made every
    // put O(thread).
    if (cached) {
      for (let i = 0; i < added.length; i++) {
        cached.items.push(added[i]);
        cached.fields.push(addedFields[i]!);
      }
    }
    const mirrored = cached ? { items: cached.items, fields: cached.fields } : null;
    return this.landed(ctx, sessionId, put, written, mirrored);
  }

  /** A put that the one-transaction path did not take: it reads the thread first, and forks it when it must. */
  async putGeneral(ctx: EngineContext, thread: LgThreadRow, put: PreparedPut): Promise<RunnableConfig> {
    const ref: SessionRef = { id: thread.sessionId, userId: put.userId };
    const { items, messagesVersion, blobs } = put;
    // Puts to one thread land one at a time in this process (savers sharing this Forkpoint too), each in the order
    // LangGraph made them; across processes, each put's rows are written in one transaction with the fork they need.
    return ctx.withSessionLock(`langgraph-put:${ref.id}`, async () => {
      const landing = await land(this.#parts, ctx, ref, thread, put);
      if (landing.asValue && !blobs.some((b) => b.channel === this.#parts.messages)) {
        // A trimmed list (it drops messages the session keeps), or a list going on from one: stored as a value.
        const [t, v] = await (items ? this.#parts.serde.dumpsTyped(items) : put.unchanged!.value);
        const version = items ? messagesVersion! : put.unchanged!.version;
        blobs.push({ channel: this.#parts.messages, version, type: t, value: Buffer.from(v) });
      }
      const atHead = await afterMoves(ctx, ref, () =>
        ctx.store.write({ sessionId: ref.id }, (tx) => writeAtHead(this.#parts, ctx, tx, thread, put, landing)),
      );
      const written = atHead === FORK ? await this.forkAndWrite(ctx, ref, put, landing) : atHead;
      return this.landed(ctx, ref.id, put, written, landing.mirrored);
    });
  }

  /** The thread's row, created when there is none (its messages checked first: a refused put creates nothing). */
  async threadFor(ctx: EngineContext, threadId: string, ns: string, put: PreparedPut): Promise<LgThreadRow> {
    const thread = await findThread(ctx, put.userId, threadId, ns);
    if (thread) return thread;
    if (put.items)
      validateMessages(this.#parts, ctx, toMessageInputs(await (put.whole?.serialized ?? serializeItems(this.#parts, put.items))), 0);
    return createThread(ctx, put.userId, threadId, ns);
  }

  /**
   * The fork a put needs (an edit where its list departs from the stored one, else a rollback to its parent), with
   * the put's rows written in the transaction that finishes the move: no other writer (another process) can move the
   * thread between them. A session that recorded tool calls moves its world first, as any move does.
   */
  async forkAndWrite(ctx: EngineContext, ref: SessionRef, put: PreparedPut, landing: Landing): Promise<Written> {
    const parts = this.#parts;
    const out: { written?: Written } = {};
    const within: WithinMove = (tx) => writeWithinMove(parts, ctx, tx, ref, put, landing, out);
    const { target } = landing;
    if (landing.editAt !== null) await edit(ctx, ref, landing.editAt, landing.append[0]!, undefined, within);
    // A step's own calls after its parent: the fork keeps them (replaying them when a move undid them).
    else if (target.after)
      await forkAtPoint(ctx, ref, { branchId: target.branchId, position: target.after.position, hash: target.after.headHash }, within);
    // The thread's own checkpoint, expired or not: prune keeps it, and the graph lists it (time travel to it).
    else if (target.fpCheckpointId !== null) await rollback(ctx, ref, target.fpCheckpointId, undefined, within, { expired: true });
    // A synthesized parent (a position no checkpoint marks): a fork right there.
    else await forkAtPoint(ctx, ref, { branchId: target.branchId, position: target.position, hash: target.headHash }, within);
    return out.written!;
  }

  /** After the put's transaction committed (not before: a failed commit leaves nothing behind in the saver either). */
  landed(ctx: EngineContext, sessionId: string, put: PreparedPut, written: Written, mirrored: MirrorItems | null): RunnableConfig {
    if (put.ns === "") this.#parts.runs.rootPut(put.run);
    this.#parts.runs.made(put.run, put.checkpointId);
    this.#parts.verified.written(sessionId, written.from, written.wrote);
    if (mirrored) this.#parts.cache.set(sessionId, { ...mirrored, headHash: written.headHash, checkpointId: put.checkpointId });
    else if (put.items === null) {
      // The messages did not change: the mirror still holds at the new checkpoint, which the next put goes on from.
      const kept = this.#parts.cache.get(sessionId);
      if (kept && kept.headHash === written.headHash) kept.checkpointId = put.checkpointId;
    }
    for (const cp of written.checkpoints) ctx.events.emit("checkpoint", cp);
    return { configurable: { thread_id: put.threadId, checkpoint_ns: put.ns, checkpoint_id: put.checkpointId } };
  }
}

function* putAtHeadUnit(
  tx: Tx,
  put: PreparedPut,
  sessionId: string,
  cached: Mirror | undefined,
  parts: SaverParts,
  ctx: EngineContext,
  append: MessageInput[],
) {
  const thread = yield* tx.langgraph.getThread(put.userId, put.threadId, put.ns);
  if (thread?.sessionId !== sessionId) return null;
  yield* refuseTakenId(tx, sessionId, put.threadId, put.checkpointId);
  if (put.guard) yield* put.guard(tx);
  const { session, branch, head } = yield* currentToWrite(ctx, tx, sessionId, put.userId);
  const { target, messagesVersion, valueBase } = yield* parentAt(tx, thread, put.parentId, branch);
  // A parent on a trimmed base: its list may need storing (the general path weighs it).
  if (put.items === null && valueBase) return null;
  if (head.position !== target.position || head.hash !== target.headHash || (cached && cached.headHash !== head.hash)) return null;
  // A step whose parent is on another branch (the one the session was forked from) that went on after it (its nodes'
  // calls, which the fork that made the session's branch undid: another run's input forking beside it): the general
  // path forks after them, replaying them, rather than landing beside the same point without them.
  if (target.branchId !== branch.id && goesOnFromHead(put) && (yield* ownCallsAfter(tx, parts, sessionId, target, put))) return null;
  const fields = validateMessages(parts, ctx, append, cached ? cached.items.length : 0);
  return yield* writeRows(parts, ctx, tx, session, branch.id, head, fields, put, cached ? put.messagesVersion : messagesVersion);
}

/** Whether the put's run journaled calls after `target` on its branch (another run's fork undid them off the head). */
function* ownCallsAfter(
  tx: Tx,
  parts: SaverParts,
  sessionId: string,
  target: { branchId: string; position: number },
  put: PreparedPut,
): Step<boolean> {
  const run = put.run;
  if (!run) return false;
  const branch = yield* tx.getBranch(target.branchId);
  if (!branch) return false;
  const head = yield* headOf(tx, branch);
  for (let position = target.position + 1; position <= head.position; position++) {
    const entry = yield* entryAt(tx, branch, position);
    if (entry?.kind === "tool" && parts.runs.own(sessionId, entry.id, run)) return true;
  }
  return false;
}

/**
 * The put's rows at the session's head, in the caller's write unit, when the head is where the put goes on from; else
 * `FORK` (written nothing): the put needs a rollback or an edit first.
 */
function* writeAtHead(
  parts: SaverParts,
  ctx: EngineContext,
  tx: Tx,
  thread: LgThreadRow,
  put: PreparedPut,
  landing: Landing,
): Step<Written | typeof FORK> {
  yield* refuseTakenId(tx, thread.sessionId, put.threadId, put.checkpointId);
  if (put.guard) yield* put.guard(tx);
  const { session, branch, head } = yield* currentToWrite(ctx, tx, thread.sessionId, put.userId);
  const { target } = landing;
  if (
    landing.editAt === null &&
    // A step going on after its calls on another branch than the session's (a fork beside it undid them): the fork
    // there replays them.
    !(target.after && target.branchId !== branch.id && (yield* ownCallsAfter(tx, parts, session.id, target, put))) &&
    (yield* continuesAtHead(tx, branch, head, target)) &&
    // Not after the later steps of a run that went on from the parent before (an old wait resumed again, or time
    // travel and updateState from an older checkpoint, whose later turns may have added calls and no message): the
    // fork leaves out what followed the checkpoint that run stored since.
    (yield* landedAfterParent(tx, session.id, target, branch, head.position)) === undefined &&
    // Not after another run's calls (two runs of the thread at once): the fork leaves them out.
    !(
      goesOnFromHead(put) &&
      put.run &&
      parts.runs.anyForeign(session.id, put.run, put.fromHead) &&
      (yield* stepCalls(tx, parts, session.id, thread, branch, target.position, head.position, put))
    )
  ) {
    return yield* writeRows(parts, ctx, tx, session, branch.id, head, landing.fields, put, landing.messagesVersion);
  }
  // The fork's refusals again, on what this write sees: a move or an append landed since the put was planned.
  if (put.parentId !== null) yield* refuseMovedParent(tx, session.id, branch, thread, target, goesOnFromHead(put), put.run);
  return FORK;
}

/** The put's rows after `head` of `branchId` (in the caller's write unit); what the saver keeps of them. */
function* writeRows(
  parts: SaverParts,
  ctx: EngineContext,
  tx: Tx,
  session: SessionRow,
  branchId: string,
  head: Head,
  fields: EntryFields[],
  put: PreparedPut,
  messagesVersion: string | null,
): Step<Written> {
  const msgs = yield* writeMessages(ctx, tx, session, branchId, head, fields);
  // LangGraph's per-step checkpoints are automatic: `listCheckpoints({ auto: false })` lists only a user's own.
  const row = yield* writeCheckpoint(ctx, tx, session, branchId, msgs.head, { name: null, auto: true, metadata: put.cpMetadata });
  for (const b of put.blobs) yield* tx.langgraph.insertBlob({ sessionId: session.id, ...b });
  yield* tx.langgraph.insertCheckpoint({
    sessionId: session.id,
    checkpointId: put.checkpointId,
    parentCheckpointId: put.parentId,
    fpCheckpointId: row.id,
    ...put.lg,
    messagesVersion,
  });
  // A `checkpointer: true` subgraph's checkpoint belongs to the root's branch it is put on (`put-on.ts`).
  if (memoryParentNs(put.ns) !== undefined)
    yield* markPutOn(tx, put.userId, put.threadId, session.id, put.checkpointId, {
      travelledFrom: put.run?.travelledFrom,
      checkpointId: put.rootStep,
      exitReadOn: put.exit ? put.run?.readOn : undefined,
    });
  // The lineage's segments, when the saver's kept lineage cannot simply be extended (a new thread, a new branch).
  const last = parts.verified.get(session.id)?.lineage.segments.at(-1);
  const segments = msgs.rows.length > 0 && last?.branchId !== branchId ? yield* tx.lineage(branchId, msgs.head.position) : null;
  return {
    checkpoints: [...msgs.checkpoints, toCheckpoint(row)],
    headHash: msgs.head.hash,
    from: head,
    wrote: { segments, rows: msgs.rows },
  };
}

/**
 * Whether a put from `target` lands at the session's head: the head is the target, or what came after the target on
 * the current lineage is tool calls and state changes only, which the step's own nodes recorded (a tool that journals
 * its call through the thread's session) and which the step goes on after, not away from.
 */
function* continuesAtHead(tx: Tx, branch: BranchRow, head: Head, target: { position: number; headHash: string }): Step<boolean> {
  if (head.position <= target.position) return head.position === target.position && head.hash === target.headHash;
  const at = yield* entryAt(tx, branch, target.position);
  return (at?.hash ?? GENESIS_HASH) === target.headHash && (at?.msgCount ?? 0) === head.msgCount;
}

/** The put's rows, written in the transaction that finishes its fork. */
function* writeWithinMove(
  parts: SaverParts,
  ctx: EngineContext,
  tx: Tx,
  ref: SessionRef,
  put: PreparedPut,
  landing: Landing,
  out: { written?: Written },
): Step<void> {
  yield* refuseTakenId(tx, ref.id, put.threadId, put.checkpointId);
  const { session, branch, head } = yield* ownedCurrent(tx, ref.id, ref.userId);
  const fields = landing.editAt === null ? landing.fields : landing.fields.slice(1);
  // Marked as the saver's own fork's: a run this fork left behind goes on (`moved-parent.ts`).
  const forked = { ...put, cpMetadata: forkedMetadata(put.cpMetadata) };
  out.written = yield* writeRows(parts, ctx, tx, session, branch.id, head, fields, forked, landing.messagesVersion);
}
