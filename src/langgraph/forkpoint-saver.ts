// ForkpointSaver: LangGraph.js's checkpointer interface on a forkpoint database. Each thread (and namespace) is a
// forkpoint session of one user; each LangGraph checkpoint is a forkpoint checkpoint; the messages channel is the
// session's messages, appended once each (not rewritten whole at every step, as other savers do); a put from an older
// checkpoint (time travel, a fork) is a rollback, or an edit when the messages differ, so the session's tree holds
// every version. Other channels are stored once per version, pending writes beside them.
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver, WRITES_IDX_MAP,
  type ChannelVersions, type Checkpoint, type CheckpointListOptions, type CheckpointMetadata,
  type CheckpointTuple, type PendingWrite, type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import { ConflictError, NotFoundError, ValidationError } from "../models/errors.js";
import { idSchema, langGraphSaverOptions, parseInput } from "../models/inputs.js";
import { assertWellFormed } from "../models/strings.js";
import { toJsonText, type JsonValue } from "../models/json.js";
import type { Checkpoint as CheckpointInfo, MessageInput } from "../models/types.js";
import type { LgCheckpointRow, LgThreadRow, LgWriteRow } from "../store/langgraph-tables.js";
import type { BranchRow, EntryRow, LineageSegment, SessionRow, Store } from "../store/store.js";
import { messageFields } from "../sessions/append.js";
import type { EngineContext, SessionRef } from "../sessions/context.js";
import { canonicalJson } from "../sessions/integrity.js";
import { writeNewSession } from "../sessions/create-session.js";
import { deleteSessions } from "../sessions/delete-session.js";
import { edit } from "../sessions/edit.js";
import { engineOf, type Forkpoint } from "../sessions/forkpoint.js";
import { headOf, headOfEntry, lineageMessages, type Head } from "../sessions/lineage.js";
import { writeCheckpoint, writeMessages, type EntryFields } from "../sessions/log-writer.js";
import { ownedCurrent, ownedSession, sessionCheckpoint } from "../sessions/ownership.js";
import { rollback } from "../sessions/rollback.js";
import { forkAtPoint } from "../sessions/langgraph-bridge.js";
import type { SessionHandle } from "../sessions/session-handle.js";
import { toCheckpoint, toMessage } from "../sessions/rows.js";
import { fromMessage, toMessageInput } from "./messages.js";
import { MirrorCache, extendsMirror, fieldsOf, mirrorOf, type Mirror, type MirrorItems } from "./mirror-cache.js";
import { VerifiedItemsCache } from "./verified-items.js";
import { WeightedLru } from "./weighted-lru.js";
import { CheckpointReader } from "./checkpoint-reader.js";
import { configOf, serializeItems, threadConfig, versionKey, type SaverParts } from "./saver-parts.js";
import { checkpointAt, resolveSynthesized, type PointCheckpoint } from "./thread-head.js";

/** Options of `ForkpointSaver`. */
export interface ForkpointSaverOptions {
  /**
   * The user whose threads a run reads and writes when its config names none (`configurable.userId`, or
   * `configurable.user_id`). Default "langgraph".
   */
  userId?: string;
  /** The channel kept as the session's messages (an array channel, as `MessagesAnnotation` has). Default "messages". */
  messagesChannel?: string;
  /** LangGraph's serializer for channel values and metadata. Default: LangGraph's own (`JsonPlusSerializer`). */
  serde?: SerializerProtocol;
}


/** Where a put lands (the checkpoint it goes on from, and the message where its list departs), and what it writes. */
interface Landing {
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
  /** The new list could not be kept as messages (it drops some from the end): it is stored as a value. */
  asValue: boolean;
}

/** The point a put goes on from, and the forkpoint checkpoint there, if the parent is stored (null: synthesized). */
interface Target {
  fpCheckpointId: string | null;
  branchId: string;
  position: number;
  headHash: string;
}

/** A put's parent: where it sits, and the messages channel's version there. */
interface ParentAt {
  target: Target;
  messagesVersion: string | null;
}

/** A put, serialized and checked, before it lands. */
interface PreparedPut {
  /** The user whose thread it is (from the run's config, else the saver's). */
  userId: string;
  threadId: string;
  ns: string;
  parentId: string | null;
  checkpointId: string;
  /** The messages channel's new list (null: the channel did not change). */
  items: unknown[] | null;
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
}

/** What a put's transaction wrote, for what the saver keeps and the events. */
interface Written {
  checkpoints: CheckpointInfo[];
  headHash: string;
  from: Head;
  wrote: { segments: LineageSegment[] | null; rows: EntryRow[] };
}

/** A put's new messages (those after the thread's mirror), taken as the put was called. */
interface NewItems {
  /** The mirror they extend: if the thread's mirror is another one by the time the put lands, they are taken again. */
  mirror: Mirror;
  added: unknown[];
  fields: unknown[][];
  /** Their serialization; null when the serializer refused one (the general path reports it). */
  serialized: Promise<JsonValue[] | null>;
}


/** `#writeAtHead`'s answer when the put goes on from elsewhere than the session's head, or edits a message. */
const FORK = Symbol("fork");

/** How many threads' sessions a saver remembers for its one-transaction put. */
const MAX_KNOWN_THREADS = 100_000;

/** A thread's key in the saver's session map (a clash through a NUL in a name only costs a put its fast path). */
const threadKey = (userId: string, threadId: string, ns: string): string => `${userId}\0${ns}\0${threadId}`;


/**
 * A LangGraph.js checkpointer (`BaseCheckpointSaver`) that stores threads as forkpoint sessions.
 * @example
 * const saver = new ForkpointSaver(fp, { userId: "alice" });
 * const graph = workflow.compile({ checkpointer: saver });
 * await graph.invoke({ messages: [{ role: "user", content: "hi" }] }, { configurable: { thread_id: "t1" } });
 */
export class ForkpointSaver extends BaseCheckpointSaver {
  readonly #fp: Forkpoint;
  readonly #userId: string;
  readonly #messages: string;
  readonly #cache = new MirrorCache();
  readonly #parts: SaverParts;
  readonly #reader: CheckpointReader;
  /** The session of each thread this saver has read or put to (`threadKey`): where a put tries its one-transaction path. */
  readonly #sessions = new WeightedLru<string>(MAX_KNOWN_THREADS);
  readonly #verified = new VerifiedItemsCache();

  constructor(fp: Forkpoint, options: ForkpointSaverOptions = {}) {
    super(options?.serde);
    try {
      engineOf(fp);
    } catch {
      throw new ValidationError("fp", "must be a Forkpoint from openForkpoint()");
    }
    const o = parseInput(langGraphSaverOptions, options, "options");
    this.#fp = fp;
    this.#userId = o.userId ?? "langgraph";
    this.#messages = o.messagesChannel ?? "messages";
    this.#parts = {
      serde: this.serde, messages: this.#messages, defaultUserId: this.#userId, cache: this.#cache, verified: this.#verified,
      nextVersion: (v) => this.getNextVersion(v),
    };
    this.#reader = new CheckpointReader(this.#parts);
  }

  async #engine(): Promise<EngineContext> {
    const { ctx, guard } = engineOf(this.#fp);
    await guard();
    return ctx;
  }

  /**
   * Channel versions are a counter plus a random fraction (3.8415…, then 4.2207…): still increasing, but a fork that
   * writes a channel again never reuses a version that holds another value on another branch.
   */
  override getNextVersion(current: number | undefined): number {
    const n = typeof current === "number" && Number.isFinite(current) ? Math.floor(current) : 0;
    return n + 1 + (Math.random() * 0.998 + 0.001);
  }

  /**
   * The user a run's config names (`configurable.userId`, or `configurable.user_id`), else the saver's: one saver
   * serves many users, each with their own threads (alice's "t1" and bob's "t1" are two sessions).
   */
  #userOf(config: RunnableConfig | undefined): string {
    const c = (config?.configurable ?? {}) as Record<string, unknown>;
    const [camel, snake] = [c.userId ?? undefined, c.user_id ?? undefined];
    if (camel !== undefined && snake !== undefined && camel !== snake) {
      throw new ValidationError("config.configurable.user_id", "differs from config.configurable.userId");
    }
    if (camel === undefined && snake === undefined) return this.#userId;
    return parseInput(idSchema, camel ?? snake, camel !== undefined ? "config.configurable.userId" : "config.configurable.user_id");
  }

  /**
   * A checkpoint of a thread: the one `checkpoint_id` names (stored, or synthesized at a point), or without one the
   * thread's head, which is its session's current position (`thread-head.ts`): a forkpoint move or append on the
   * session is what the graph goes on from.
   */
  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    if (config === null || typeof config !== "object") throw new ValidationError("config", "must be a RunnableConfig object");
    const { threadId, ns = "", checkpointId } = threadConfig(config);
    if (threadId === undefined) return undefined;
    const userId = this.#userOf(config);
    const ctx = await this.#engine();
    const found = await ctx.store.read(() => {
      const thread = ctx.store.langgraph.getThread(userId, threadId, ns);
      const at = thread && this.#checkpointOf(ctx.store, thread, checkpointId);
      return at && { thread, at };
    });
    if (!found) return undefined;
    this.#sessions.set(threadKey(userId, threadId, ns), found.thread.sessionId, 1);
    return this.#reader.pointTuple(ctx, found.thread, found.at, true);
  }

  /** The checkpoint `checkpointId` names in the thread (stored or synthesized), or the thread's head (in a read). */
  #checkpointOf(store: Store, thread: LgThreadRow, checkpointId: string | undefined): PointCheckpoint | undefined {
    const current = this.#currentBranch(store, thread);
    if (checkpointId === undefined) {
      const { head } = ownedCurrent(store, thread.sessionId, thread.userId);
      return checkpointAt(store, thread.sessionId, current, head.position);
    }
    const row = store.langgraph.getCheckpoint(thread.sessionId, checkpointId);
    if (row) return { kind: "stored", row };
    const synth = resolveSynthesized(store, thread.sessionId, checkpointId, current);
    return synth && { kind: "synthesized", synth };
  }

  #currentBranch(store: Store, thread: LgThreadRow): BranchRow {
    const session = ownedSession(store, thread.sessionId, thread.userId);
    return store.getBranch(session.currentBranchId)!;
  }

  override async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    if (config === null || typeof config !== "object") throw new ValidationError("config", "must be a RunnableConfig object");
    if (options === null || typeof options !== "object") throw new ValidationError("options", "must be an object");
    if (options.limit !== undefined && (typeof options.limit !== "number" || !Number.isFinite(options.limit) || options.limit < 0)) {
      throw new ValidationError("options.limit", "must be a finite number, 0 or more");
    }
    const { threadId, ns, checkpointId } = threadConfig(config);
    const userId = this.#userOf(config);
    const metadata = Object.entries(options.filter ?? {})
      .filter(([, v]) => v !== undefined)
      .map(([k, v]): [string, string] => [k, JSON.stringify(v)]);
    const ctx = await this.#engine();
    const rows = await ctx.store.read(() =>
      ctx.store.langgraph.listCheckpoints({
        userId,
        threadId,
        checkpointNs: ns,
        checkpointId,
        before: options.before?.configurable?.checkpoint_id,
        metadata,
        limit: options.limit,
      }),
    );
    // Checkpoints of one lineage share its verified history (`VerifiedItems`): read and verified once, not once each.
    for (const row of rows) {
      const tuple = await this.#reader.tupleIfThere(ctx, { userId, threadId: row.threadId, checkpointNs: row.checkpointNs }, row, false);
      if (tuple) yield tuple;
    }
  }

  override async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, newVersions: ChannelVersions): Promise<RunnableConfig> {
    if (!config?.configurable) throw new ValidationError("config.configurable", "is missing: it must hold thread_id");
    const { threadId, ns = "", checkpointId: parentId = null } = threadConfig(config);
    if (threadId === undefined || threadId === "") throw new ValidationError("config.configurable.thread_id", "is missing");
    if (typeof checkpoint?.id !== "string" || checkpoint.id === "") throw new ValidationError("checkpoint.id", "must be a non-empty string");
    assertWellFormed(threadId, "config.configurable.thread_id");
    assertWellFormed(ns, "config.configurable.checkpoint_ns");
    if (parentId !== null) assertWellFormed(parentId, "config.configurable.checkpoint_id");
    assertWellFormed(checkpoint.id, "checkpoint.id");
    for (const channel of Object.keys(newVersions ?? {})) assertWellFormed(channel, "newVersions");
    const userId = this.#userOf(config);
    if (checkpoint.channel_values !== undefined && (typeof checkpoint.channel_values !== "object" || checkpoint.channel_values === null)) {
      throw new ValidationError("checkpoint.channel_values", "must be an object");
    }
    if (newVersions !== undefined && newVersions !== null && (typeof newVersions !== "object" || Array.isArray(newVersions))) {
      throw new ValidationError("newVersions", "must be an object of channel versions");
    }

    // Everything is serialized before the first write: a value the serializer refuses leaves nothing behind. And as
    // put is called, before any await (LangGraph's serializer works synchronously): LangGraph's next step may change
    // these very values while the put is under way, and what it changes belongs to the next checkpoint.
    const { channel_values: values = {}, ...skeleton } = checkpoint;
    const list = (values as Record<string, unknown>)[this.#messages];
    let items: unknown[] | null = null;
    let messagesVersion: string | null = null;
    const serializing: Promise<[string, Uint8Array]>[] = [this.serde.dumpsTyped(skeleton), this.serde.dumpsTyped(metadata ?? {})];
    const channels: [string, string][] = [];
    for (const [channel, version] of Object.entries(newVersions ?? {})) {
      if (!(channel in values)) continue;
      if (channel === this.#messages && Array.isArray(list)) {
        items = list.slice();
        messagesVersion = versionKey(version);
        continue;
      }
      serializing.push(this.serde.dumpsTyped((values as Record<string, unknown>)[channel]));
      channels.push([channel, versionKey(version)]);
    }
    const key = threadKey(userId, threadId, ns);
    const known = this.#sessions.get(key);
    const early = known === undefined || items === null ? undefined : this.#serializeNew(known, items, parentId);
    const whole = items === null || early ? null : { mirrored: mirrorOf(items), serialized: serializeItems(this.#parts, items) };
    // Awaited by the path that needs it; a put that fails before then must not leave it rejected and unheard.
    whole?.serialized.catch(() => undefined);
    const [skeletonText, metadataText, ...channelTexts] = await Promise.all(serializing);
    const [type, body] = skeletonText!;
    const [metadataType, metadataBody] = metadataText!;
    const blobs = channels.map(([channel, version], i) => ({ channel, version, type: channelTexts[i]![0], value: Buffer.from(channelTexts[i]![1]) }));

    const ctx = await this.#engine();
    const cpMetadata = toJsonText({ langgraph: { ...scalars(metadata), threadId, checkpointNs: ns, checkpointId: checkpoint.id } }, "metadata", ctx.limits);
    const put: PreparedPut = {
      userId, threadId, ns, parentId, checkpointId: checkpoint.id, items, early, whole, messagesVersion, blobs, cpMetadata,
      lg: { type, checkpoint: Buffer.from(body), metadataType, metadata: Buffer.from(metadataBody) },
    };
    if (known !== undefined) {
      const done = await ctx.withSessionLock(`langgraph-put:${known}`, () => this.#putAtHead(ctx, known, put));
      if (done) return done;
    }
    for (let attempt = 1; ; attempt++) {
      const thread = await this.#threadFor(ctx, threadId, ns, put);
      this.#sessions.set(key, thread.sessionId, 1);
      try {
        return await this.#putGeneral(ctx, thread, put);
      } catch (error) {
        // Another saver (or process) deleted the thread meanwhile: the put goes to the thread started anew, as a put
        // after the deletion would. (Twice at most: a thread deleted again and again is somebody else's loop.)
        if (attempt < 3 && error instanceof NotFoundError && error.kind === "session" && error.id === thread.sessionId) continue;
        throw error;
      }
    }
  }

  /** The thread's row, created when there is none (its messages checked first: a refused put creates nothing). */
  async #threadFor(ctx: EngineContext, threadId: string, ns: string, put: PreparedPut): Promise<LgThreadRow> {
    const thread = await this.#findThread(ctx, put.userId, threadId, ns);
    if (thread) return thread;
    if (put.items) this.#validate(ctx, (await (put.whole?.serialized ?? serializeItems(this.#parts, put.items))).map(toMessageInput), 0);
    return this.#createThread(ctx, put.userId, threadId, ns);
  }

  /** A put that the one-transaction path did not take: it reads the thread first, and forks it when it must. */
  async #putGeneral(ctx: EngineContext, thread: LgThreadRow, put: PreparedPut): Promise<RunnableConfig> {
    const ref: SessionRef = { id: thread.sessionId, userId: put.userId };
    const { items, messagesVersion, blobs } = put;
    // Puts to one thread land one at a time in this process (savers sharing this Forkpoint too), each in the order
    // LangGraph made them; across processes, each put's rows are written in one transaction with the fork they need.
    return ctx.withSessionLock(`langgraph-put:${ref.id}`, async () => {
      const landing = await this.#land(ctx, ref, thread, put);
      if (landing.asValue && !blobs.some((b) => b.channel === this.#messages)) {
        // The messages could not be kept as messages (a shorter list than its parent's): stored as a value instead.
        const [t, v] = await this.serde.dumpsTyped(items);
        blobs.push({ channel: this.#messages, version: messagesVersion!, type: t, value: Buffer.from(v) });
      }
      const atHead = await ctx.store.write(() => this.#writeAtHead(ctx, ref, put, landing));
      const written = atHead === FORK ? await this.#forkAndWrite(ctx, ref, put, landing) : atHead;
      return this.#landed(ctx, ref.id, put, written, landing.mirrored);
    });
  }

  /**
   * The items of `items` after the thread's mirror (when `items` begins with it), with their field values and their
   * serialization, both taken now: the serializer works synchronously, so they are what the items are at this call.
   */
  #serializeNew(sessionId: string, items: unknown[], parentId: string | null): NewItems | undefined {
    const mirror = this.#cache.get(sessionId);
    if (!mirror || mirror.checkpointId !== parentId || !extendsMirror(mirror, items)) return undefined;
    const added = items.slice(mirror.items.length);
    const fields = added.map(fieldsOf);
    return { mirror, added, fields, serialized: serializeItems(this.#parts, added).catch(() => null) };
  }

  /**
   * The common put, in one write transaction: the thread's session is known, its head is the parent checkpoint, and
   * the new list begins with the items this saver mirrored there (the same objects): only the new ones are written.
   * Returns null, having written nothing, when any of that is not so (the general path then lands the put).
   */
  async #putAtHead(ctx: EngineContext, sessionId: string, put: PreparedPut): Promise<RunnableConfig | null> {
    const { early } = put;
    const store = ctx.store;
    const cached = put.items === null ? undefined : this.#cache.get(sessionId);
    // The new items as serialized when put was called, if the thread's mirror is still the one they extend.
    const news = put.items === null ? undefined : early && early.mirror === cached ? early : cached && this.#serializeNew(sessionId, put.items, put.parentId);
    if (put.items !== null && !news) return null;
    const added = news?.added ?? [];
    const addedFields = news?.fields ?? [];
    const serialized = news ? await news.serialized : [];
    // Refused items: the general path reports it, after the checks that come first there (a taken checkpoint id).
    if (serialized === null) return null;
    const append = serialized.map(toMessageInput);
    const written = await store.write(() => {
      const thread = store.langgraph.getThread(put.userId, put.threadId, put.ns);
      if (thread?.sessionId !== sessionId) return null;
      refuseTakenId(store, sessionId, put.threadId, put.checkpointId);
      const { session, branch, head } = ownedCurrent(store, sessionId, put.userId);
      const { target, messagesVersion } = parentAt(store, thread, put.parentId, branch);
      if (head.position !== target.position || head.hash !== target.headHash || (cached && cached.headHash !== head.hash)) return null;
      const fields = this.#validate(ctx, append, cached ? cached.items.length : 0);
      return this.#write(ctx, session, branch.id, head, fields, put, cached ? put.messagesVersion : messagesVersion);
    });
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
    return this.#landed(ctx, sessionId, put, written, mirrored);
  }

  /** The put's rows after `head` of `branchId` (in the caller's write transaction); what the saver keeps of them. */
  #write(ctx: EngineContext, session: SessionRow, branchId: string, head: Head, fields: EntryFields[], put: PreparedPut, messagesVersion: string | null): Written {
    const store = ctx.store;
    const msgs = writeMessages(ctx, session, branchId, head, fields);
    // LangGraph's per-step checkpoints are automatic: `listCheckpoints({ auto: false })` lists only a user's own.
    const row = writeCheckpoint(ctx, session, branchId, msgs.head, { name: null, auto: true, metadata: put.cpMetadata, expiresAt: null });
    for (const b of put.blobs) store.langgraph.insertBlob({ sessionId: session.id, ...b });
    store.langgraph.insertCheckpoint({
      sessionId: session.id, checkpointId: put.checkpointId, parentCheckpointId: put.parentId, fpCheckpointId: row.id, ...put.lg, messagesVersion,
    });
    // The lineage's segments, when the saver's kept lineage cannot simply be extended (a new thread, a new branch).
    const last = this.#verified.get(session.id)?.lineage.segments.at(-1);
    const segments = msgs.rows.length > 0 && last?.branchId !== branchId ? store.lineage(branchId, msgs.head.position) : null;
    return { checkpoints: [...msgs.checkpoints, toCheckpoint(row)], headHash: msgs.head.hash, from: head, wrote: { segments, rows: msgs.rows } };
  }

  /** After the put's transaction committed (not before: a failed commit leaves nothing behind in the saver either). */
  #landed(ctx: EngineContext, sessionId: string, put: PreparedPut, written: Written, mirrored: MirrorItems | null): RunnableConfig {
    this.#verified.written(sessionId, written.from, written.wrote);
    if (mirrored) this.#cache.set(sessionId, { ...mirrored, headHash: written.headHash, checkpointId: put.checkpointId });
    else if (put.items === null) {
      // The messages did not change: the mirror still holds at the new checkpoint, which the next put goes on from.
      const kept = this.#cache.get(sessionId);
      if (kept && kept.headHash === written.headHash) kept.checkpointId = put.checkpointId;
    }
    for (const cp of written.checkpoints) ctx.events.emit("checkpoint", cp);
    return { configurable: { thread_id: put.threadId, checkpoint_ns: put.ns, checkpoint_id: put.checkpointId } };
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ""): Promise<void> {
    const { threadId, ns = "", checkpointId } = threadConfig(config ?? {});
    if (threadId === undefined || threadId === "") throw new ValidationError("config.configurable.thread_id", "is missing");
    if (checkpointId === undefined) throw new ValidationError("config.configurable.checkpoint_id", "is missing");
    if (typeof taskId !== "string") throw new ValidationError("taskId", "must be a string");
    if (typeof taskPath !== "string") throw new ValidationError("taskPath", "must be a string");
    const userId = this.#userOf(config);
    assertWellFormed(threadId, "config.configurable.thread_id");
    assertWellFormed(ns, "config.configurable.checkpoint_ns");
    assertWellFormed(checkpointId, "config.configurable.checkpoint_id");
    assertWellFormed(taskId, "taskId");
    assertWellFormed(taskPath, "taskPath");
    if (!Array.isArray(writes) || !writes.every((w) => Array.isArray(w) && typeof w[0] === "string")) {
      throw new ValidationError("writes", "must be an array of [channel, value] pairs");
    }
    const rows: Omit<LgWriteRow, "sessionId">[] = [];
    for (const [i, [channel, value]] of writes.entries()) {
      assertWellFormed(channel, `writes[${i}][0]`);
      const [type, body] = await this.serde.dumpsTyped(value);
      rows.push({ checkpointId, taskId, idx: WRITES_IDX_MAP[channel] ?? i, channel, type, value: Buffer.from(body), taskPath });
    }
    // Special writes (errors, interrupts) replace an earlier one of the task; regular ones are written once.
    const special = writes.every(([channel]) => channel in WRITES_IDX_MAP);
    const ctx = await this.#engine();
    // LangGraph sends a step's writes without waiting for the put of their checkpoint (puts are queued one after
    // another): writes may come first, so they are keyed by the checkpoint's id, not tied to a stored row.
    // One transaction: a deleteThread in between would leave the writes behind a thread that no longer exists.
    await ctx.store.write(() => {
      const thread = this.#threadTx(ctx, userId, threadId, ns);
      ctx.store.langgraph.insertWrites(rows.map((r) => ({ sessionId: thread.sessionId, ...r })), special);
    });
  }

  /**
   * Deletes every namespace of the thread: its sessions, with all they recorded, and its saver rows. The thread is
   * `options.userId`'s (default: the saver's user).
   */
  override async deleteThread(threadId: string, options?: { userId?: string }): Promise<void> {
    if (typeof threadId !== "string" && typeof threadId !== "number") throw new ValidationError("threadId", "must be a string");
    const userId = this.#userIn(options);
    const ctx = await this.#engine();
    const sessions = await ctx.store.read(() => ctx.store.langgraph.threadSessions(userId, String(threadId)));
    // One transaction for all its namespaces: a refused one (a move in progress) leaves the whole thread.
    await deleteSessions(ctx, sessions.map((id) => ({ id, userId })), "skip");
    for (const id of sessions) {
      this.#cache.delete(id);
      this.#verified.delete(id);
    }
    for (const [key, id] of [...this.#sessions.entries()]) if (sessions.includes(id)) this.#sessions.delete(key);
  }

  /**
   * The forkpoint session a thread lives in, as `fp.getSession` gives it: its moves, appends and state changes are
   * what the graph goes on from. `NotFoundError` (kind "thread") when the user has no such thread.
   * @example const s = await saver.sessionFor("t1", { userId: "alice" }); await s.rollback(cp.id);
   */
  async sessionFor(threadId: string, options?: { userId?: string; checkpointNs?: string }): Promise<SessionHandle> {
    const id = parseInput(idSchema, threadId, "threadId");
    const userId = this.#userIn(options);
    const ns = options?.checkpointNs ?? "";
    if (typeof ns !== "string") throw new ValidationError("options.checkpointNs", "must be a string");
    const ctx = await this.#engine();
    const thread = await this.#findThread(ctx, userId, id, ns);
    if (!thread) throw new NotFoundError("thread", id);
    return this.#fp.getSession(thread.sessionId, { userId });
  }

  /**
   * A LangGraph config (`{ configurable: { thread_id, checkpoint_ns, checkpoint_id } }`) to invoke a graph from:
   * `{ branchId }`, that branch's head; `{ checkpointId }`, a LangGraph checkpoint's own config, or for a forkpoint
   * checkpoint of a thread's session (a user's own), a checkpoint at its position that LangGraph resumes from (a
   * synthesized one where no LangGraph checkpoint sits: `thread-head.ts`). Invoked away from the thread's head, the
   * graph forks there, as LangGraph's time travel does. `NotFoundError` for ids that are not the user's threads'.
   * @example await graph.invoke(null, await saver.configFor({ checkpointId: cp.id }, { userId: "alice" }));
   */
  async configFor(target: { branchId: string } | { checkpointId: string }, options?: { userId?: string }): Promise<RunnableConfig> {
    if (target === null || typeof target !== "object") throw new ValidationError("target", "must be { branchId } or { checkpointId }");
    const userId = this.#userIn(options);
    const ctx = await this.#engine();
    const store = ctx.store;
    const found = await store.read((): { thread: LgThreadRow; at: PointCheckpoint | undefined } => {
      if ("branchId" in target) {
        const branchId = parseInput(idSchema, target.branchId, "target.branchId");
        const branch = store.getBranch(branchId);
        const thread = branch && store.langgraph.threadOfSession(branch.sessionId);
        if (!branch || !thread || thread.userId !== userId) throw new NotFoundError("branch", branchId);
        ownedSession(store, thread.sessionId, userId);
        return { thread, at: checkpointAt(store, thread.sessionId, branch, headOf(store, branch).position) };
      }
      const checkpointId = parseInput(idSchema, (target as { checkpointId: unknown }).checkpointId, "target.checkpointId");
      const cp = store.getCheckpoint(checkpointId);
      const thread = cp && cp.userId === userId ? store.langgraph.threadOfSession(cp.sessionId) : undefined;
      if (cp && thread && thread.userId === userId) {
        sessionCheckpoint(store, ownedSession(store, cp.sessionId, userId), checkpointId, ctx.now());
        const lg = store.langgraph.checkpointInFp(cp.id);
        if (lg) return { thread, at: { kind: "stored", row: lg } };
        return { thread, at: checkpointAt(store, cp.sessionId, store.getBranch(cp.branchId)!, cp.position, "point") };
      }
      // A LangGraph checkpoint id: unique within a thread, so looked up among the user's threads.
      const rows = store.langgraph.listCheckpoints({ userId, checkpointId, metadata: [] });
      if (rows.length === 0) throw new NotFoundError("checkpoint", checkpointId);
      if (rows.length > 1) throw new ConflictError(`LangGraph checkpoint ${checkpointId} is in several threads: name its forkpoint checkpoint instead`, "AMBIGUOUS_CHECKPOINT");
      return { thread: store.langgraph.threadOfSession(rows[0]!.sessionId)!, at: { kind: "stored", row: rows[0]! } };
    });
    const { thread, at } = found;
    if (!at) {
      // An empty start (nothing written on that branch yet): the thread itself.
      const { checkpoint_id: _none, ...configurable } = configOf(this.#parts, thread, "").configurable!;
      return { configurable };
    }
    return configOf(this.#parts, thread, at.kind === "stored" ? at.row.checkpointId : at.synth.id);
  }

  /** The user an options object names, else the saver's. */
  #userIn(options: { userId?: string } | undefined): string {
    if (options !== undefined && (options === null || typeof options !== "object")) throw new ValidationError("options", "must be an object");
    return options?.userId === undefined ? this.#userId : parseInput(idSchema, options.userId, "options.userId");
  }

  #findThread(ctx: EngineContext, userId: string, threadId: string, ns: string): Promise<LgThreadRow | undefined> {
    return ctx.store.read(() => ctx.store.langgraph.getThread(userId, threadId, ns));
  }

  /** The thread's session with its empty start checkpoint (or the one another writer created meanwhile). */
  #createThread(ctx: EngineContext, userId: string, threadId: string, ns: string): Promise<LgThreadRow> {
    return ctx.store.write(() => this.#threadTx(ctx, userId, threadId, ns));
  }

  /** The thread's row, created with its session and empty start checkpoint when there is none (in the caller's write). */
  #threadTx(ctx: EngineContext, userId: string, threadId: string, ns: string): LgThreadRow {
    const store = ctx.store;
    const again = store.langgraph.getThread(userId, threadId, ns);
    if (again) return again;
    const title = ns === "" ? threadId : `${threadId} (${ns})`;
    const { id, branchId } = writeNewSession(ctx, {
      userId,
      title: title.length > 512 ? title.slice(0, 512) : title,
      metadata: toJsonText({ langgraph: { threadId, checkpointNs: ns } }, "metadata", ctx.limits),
    });
    // Automatic, as LangGraph's own are: a user's listing of their own checkpoints (`auto: false`) leaves it out.
    const start = writeCheckpoint(ctx, { id, userId }, branchId, headOfEntry(undefined), {
      name: "langgraph:start", auto: true, metadata: null, expiresAt: null,
    });
    const row = { userId, threadId, checkpointNs: ns, sessionId: id, startCheckpointId: start.id };
    store.langgraph.insertThread(row);
    return row;
  }

  /**
   * Works out where a put lands and which messages it appends, comparing the new list with the messages at the parent
   * checkpoint (none at the empty start), and validates them. Nothing moves here: `#forkAndWrite` forks the session
   * (an edit where the new list departs from the old one, else a rollback when the parent is not the head) in the
   * transaction that writes the put. What this reads cannot change meanwhile: a checkpoint's lineage is immutable.
   */
  async #land(ctx: EngineContext, ref: SessionRef, thread: LgThreadRow, put: PreparedPut): Promise<Landing> {
    const { parentId, checkpointId, items, messagesVersion } = put;
    const store = ctx.store;
    const parent = await store.read(() => {
      const session = ownedSession(store, ref.id, ref.userId);
      refuseTakenId(store, ref.id, thread.threadId, checkpointId);
      return parentAt(store, thread, parentId, store.getBranch(session.currentBranchId)!);
    });
    const target = parent.target;
    let append: MessageInput[] = [];
    let editAt: string | null = null;
    let outcome: Pick<Landing, "messagesVersion" | "mirrored" | "asValue">;
    if (items === null) {
      // The messages channel unchanged: the parent's messages (none at the start) are this checkpoint's.
      outcome = { messagesVersion: parent.messagesVersion, mirrored: null, asValue: false };
    } else {
      const cached = this.#cache.get(ref.id);
      if (cached && cached.headHash === target.headHash && extendsMirror(cached, items)) {
        // The same objects as the last put (LangGraph keeps them in its channel): only the new ones are serialized.
        // As put was called, when it took them then: the new items alone, or the whole list.
        const n = cached.items.length;
        const added = items.slice(n);
        const { early, whole } = put;
        const taken = early?.mirror === cached ? { fields: early.fields, serialized: await early.serialized }
          : whole ? { fields: whole.mirrored.fields.slice(n), serialized: (await whole.serialized).slice(n) }
          : null;
        // Not taken then, or refused by the serializer then (serialized again, it says which).
        append = (taken?.serialized ?? (await serializeItems(this.#parts, added))).map(toMessageInput);
        const fields = taken?.fields ?? added.map(fieldsOf);
        outcome = { messagesVersion, mirrored: { items: [...cached.items, ...added], fields: [...cached.fields, ...fields] }, asValue: false };
      } else {
        // As put was called, when it took them then.
        const mirrored = put.whole?.mirrored ?? mirrorOf(items);
        const serialized = await (put.whole?.serialized ?? serializeItems(this.#parts, items));
        const old = await store.read(() => lineageMessages(store, target.branchId, toMessage, target.position));
        let common = 0;
        while (common < old.length && common < items.length && canonicalJson(fromMessage(old[common]!)) === canonicalJson(serialized[common])) common++;
        if (common < old.length && common === items.length) {
          // A list that drops messages from the end cannot be a fork of messages: it is stored as a value.
          outcome = { messagesVersion: null, mirrored: null, asValue: true };
        } else {
          if (common < old.length) editAt = old[common]!.id;
          append = serialized.slice(common).map(toMessageInput);
          outcome = { messagesVersion, mirrored, asValue: false };
        }
      }
    }
    // Every message is checked before the session moves: a refused one leaves the database as it was.
    const fields = this.#validate(ctx, append, items === null ? 0 : items.length - append.length);
    return { target, editAt, append, fields, ...outcome };
  }

  /**
   * The put's rows at the session's head, in the caller's write transaction, when the head is where the put goes on
   * from; else `FORK` (written nothing): the put needs a rollback or an edit first.
   */
  #writeAtHead(ctx: EngineContext, ref: SessionRef, put: PreparedPut, landing: Landing): Written | typeof FORK {
    refuseTakenId(ctx.store, ref.id, put.threadId, put.checkpointId);
    const { session, branch, head } = ownedCurrent(ctx.store, ref.id, ref.userId);
    const { target } = landing;
    if (landing.editAt !== null || head.position !== target.position || head.hash !== target.headHash) return FORK;
    return this.#write(ctx, session, branch.id, head, landing.fields, put, landing.messagesVersion);
  }

  /**
   * The fork a put needs (an edit where its list departs from the stored one, else a rollback to its parent), with
   * the put's rows written in the transaction that finishes the move: no other writer (another process) can move the
   * thread between them. A session that recorded tool calls moves its world first, as any move does.
   */
  async #forkAndWrite(ctx: EngineContext, ref: SessionRef, put: PreparedPut, landing: Landing): Promise<Written> {
    let written: Written | undefined;
    const within = () => {
      refuseTakenId(ctx.store, ref.id, put.threadId, put.checkpointId);
      const { session, branch, head } = ownedCurrent(ctx.store, ref.id, ref.userId);
      const fields = landing.editAt === null ? landing.fields : landing.fields.slice(1);
      written = this.#write(ctx, session, branch.id, head, fields, put, landing.messagesVersion);
    };
    const { target } = landing;
    if (landing.editAt !== null) await edit(ctx, ref, landing.editAt, landing.append[0]!, undefined, within);
    else if (target.fpCheckpointId !== null) await rollback(ctx, ref, target.fpCheckpointId, undefined, within);
    // A synthesized parent (a position no checkpoint marks): a fork right there.
    else await forkAtPoint(ctx, ref, { branchId: target.branchId, position: target.position, hash: target.headHash }, within);
    return written!;
  }

  /** The messages as entry fields, each checked against the limits; `offset` is the first one's index in the channel. */
  #validate(ctx: EngineContext, messages: MessageInput[], offset: number): EntryFields[] {
    return messages.map((m, i) => messageFields(ctx, m, `checkpoint.channel_values.${this.#messages}[${offset + i}]`));
  }


}

/**
 * Where a put's parent sits, in a unit of work: a stored checkpoint's forkpoint checkpoint, a synthesized one's point
 * (`current`: the session's current branch, where it is looked for first), or the thread's empty start when the put
 * has no parent (or one the thread does not know).
 */
function parentAt(store: Store, thread: LgThreadRow, parentId: string | null, current: BranchRow): ParentAt {
  if (parentId !== null) {
    const row = store.langgraph.getCheckpoint(thread.sessionId, parentId);
    if (row) return { target: targetOf(store.getCheckpoint(row.fpCheckpointId)!), messagesVersion: row.messagesVersion };
    const synth = resolveSynthesized(store, thread.sessionId, parentId, current);
    if (synth) {
      const { branchId, position, hash } = synth.point;
      const messagesVersion = synth.messagesVersion === undefined ? null : versionKey(synth.messagesVersion);
      return { target: { fpCheckpointId: null, branchId, position, headHash: hash }, messagesVersion };
    }
  }
  return { target: targetOf(store.getCheckpoint(thread.startCheckpointId)!), messagesVersion: null };
}

const targetOf = (cp: { id: string; branchId: string; position: number; headHash: string }): Target =>
  ({ fpCheckpointId: cp.id, branchId: cp.branchId, position: cp.position, headHash: cp.headHash });

/** A LangGraph checkpoint id is written once per thread. */
function refuseTakenId(store: Store, sessionId: string, threadId: string, checkpointId: string): void {
  if (store.langgraph.getCheckpoint(sessionId, checkpointId)) {
    throw new ConflictError(`thread ${threadId} already has a checkpoint ${checkpointId}`, "CHECKPOINT_EXISTS");
  }
}

/** The scalar fields of LangGraph's metadata (`source`, `step`, …), for the forkpoint checkpoint's own metadata. */
function scalars(metadata: CheckpointMetadata | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(metadata ?? {})) {
    if (typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v))) out[k] = v;
  }
  return out;
}
