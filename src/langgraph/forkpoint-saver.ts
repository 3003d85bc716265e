// ForkpointSaver: LangGraph.js's checkpointer interface on a forkpoint database. Each thread (and namespace) is a
// forkpoint session of one user; each LangGraph checkpoint is a forkpoint checkpoint; the messages channel is the
// session's messages, appended once each (not rewritten whole at every step, as other savers do); a put from an older
// checkpoint (time travel, a fork) is a rollback, or an edit when the messages differ, so the session's tree holds
// every version. Other channels are stored once per version, pending writes beside them. Both ways: a thread's head is
// its session's current position (`thread-head.ts`). This class takes LangGraph's calls; its parts read checkpoints
// back (`checkpoint-reader.ts`), plan puts (`put-plan.ts`) and write them (`put-writer.ts`).
import type { Step, Tx, Step, Tx, RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  WRITES_IDX_MAP,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import { ConflictError, NotFoundError, ValidationError } from "../models/errors.js";
import { idSchema, langGraphSaverOptions, parseInput } from "../models/inputs.js";
import { assertWellFormed } from "../models/strings.js";
import { toJsonText } from "../models/json.js";
import type { LgThreadRow, LgWriteRow } from "../store/port/index.js";
import type { Store } from "../store/port/index.js";
import type { EngineContext } from "../sessions/context.js";
import { deleteSessions } from "../sessions/delete-session.js";
import { engineOf, type Forkpoint } from "../sessions/forkpoint.js";
import { headOf } from "../sessions/lineage.js";
import { ownedCurrent, ownedSession, sessionCheckpoint } from "../sessions/ownership.js";
import type { SessionHandle } from "../sessions/session-handle.js";
import { MirrorCache, mirrorOf } from "./mirror-cache.js";
import { VerifiedItemsCache } from "./verified-items.js";
import { WeightedLru } from "./weighted-lru.js";
import { CheckpointReader } from "./checkpoint-reader.js";
import { serializeNew, type PreparedPut } from "./put-plan.js";
import { PutWriter } from "./put-writer.js";
import { configOf, serializeItems, threadConfig, versionKey, type SaverParts } from "./saver-parts.js";
import { checkpointAt, pendingAtMovedHead, resolveSynthesized, type PointCheckpoint } from "./thread-head.js";

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
  readonly #writer: PutWriter;
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
      serde: this.serde,
      messages: this.#messages,
      defaultUserId: this.#userId,
      cache: this.#cache,
      verified: this.#verified,
      nextVersion: (v) => this.getNextVersion(v),
    };
    this.#reader = new CheckpointReader(this.#parts);
    this.#writer = new PutWriter(this.#parts);
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
    const found = await ctx.store.read(function* (tx) {
      const thread = yield* tx.langgraph.getThread(userId, threadId, ns);
      const at = thread && this.#checkpointOf(ctx.store, thread, checkpointId);
      const id = at && (at.kind === "stored" ? at.row.checkpointId : at.synth.id);
      // A head the session was moved back to, after the graph went on from it: that continuation is undone there.
      return at && { thread, at, undone: at.moved === true && (yield* tx.langgraph.hasChild(thread.sessionId, id!)) };
    });
    if (!found) return undefined;
    this.#sessions.set(threadKey(userId, threadId, ns), found.thread.sessionId, 1);
    const tuple = await this.#reader.pointTuple(ctx, found.thread, found.at, true);
    if (tuple?.pendingWrites && found.undone) tuple.pendingWrites = pendingAtMovedHead(tuple.pendingWrites);
    return tuple;
  }

  /** The checkpoint `checkpointId` names in the thread (stored or synthesized), or the thread's head (in a read). */
  #checkpointOf(store: Store, thread: LgThreadRow, checkpointId: string | undefined): PointCheckpoint | undefined {
    if (checkpointId === undefined) {
      const { branch, head } = ownedCurrent(store, thread.sessionId, thread.userId);
      return checkpointAt(store, thread.sessionId, branch, head.position);
    }
    const row = store.langgraph.getCheckpoint(thread.sessionId, checkpointId);
    if (row) return { kind: "stored", row };
    const current = store.getBranch(ownedSession(store, thread.sessionId, thread.userId).currentBranchId);
    const synth = resolveSynthesized(store, thread.sessionId, checkpointId, current);
    return synth && { kind: "synthesized", synth };
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
    const rows = await ctx.store.read(function* (tx) {
      return yield* tx.langgraph.listCheckpoints({
        userId,
        threadId,
        checkpointNs: ns,
        checkpointId,
        before: options.before?.configurable?.checkpoint_id,
        metadata,
        limit: options.limit,
      });
    });
    // Checkpoints of one lineage share its verified history (`VerifiedItems`): read and verified once, not once each.
    for (const row of rows) {
      const tuple = await this.#reader.tupleIfThere(ctx, { userId, threadId: row.threadId, checkpointNs: row.checkpointNs }, row, false);
      if (tuple) yield tuple;
    }
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    if (!config?.configurable) throw new ValidationError("config.configurable", "is missing: it must hold thread_id");
    const { threadId, ns = "", checkpointId: parentId = null } = threadConfig(config);
    if (threadId === undefined || threadId === "") throw new ValidationError("config.configurable.thread_id", "is missing");
    if (typeof checkpoint?.id !== "string" || checkpoint.id === "")
      throw new ValidationError("checkpoint.id", "must be a non-empty string");
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
    const early = known === undefined || items === null ? undefined : serializeNew(this.#parts, known, items, parentId);
    const whole = items === null || early ? null : { mirrored: mirrorOf(items), serialized: serializeItems(this.#parts, items) };
    // Awaited by the path that needs it; a put that fails before then must not leave it rejected and unheard.
    whole?.serialized.catch(() => undefined);
    const [skeletonText, metadataText, ...channelTexts] = await Promise.all(serializing);
    const [type, body] = skeletonText!;
    const [metadataType, metadataBody] = metadataText!;
    const blobs = channels.map(([channel, version], i) => ({
      channel,
      version,
      type: channelTexts[i]![0],
      value: Buffer.from(channelTexts[i]![1]),
    }));

    const ctx = await this.#engine();
    const cpMetadata = toJsonText(
      { langgraph: { ...scalars(metadata), threadId, checkpointNs: ns, checkpointId: checkpoint.id } },
      "metadata",
      ctx.limits,
    );
    const put: PreparedPut = {
      userId,
      threadId,
      ns,
      parentId,
      checkpointId: checkpoint.id,
      items,
      early,
      whole,
      messagesVersion,
      blobs,
      cpMetadata,
      lg: { type, checkpoint: Buffer.from(body), metadataType, metadata: Buffer.from(metadataBody) },
    };
    if (known !== undefined) {
      const done = await ctx.withSessionLock(`langgraph-put:${known}`, () => this.#writer.putAtHead(ctx, known, put));
      if (done) return done;
    }
    for (let attempt = 1; ; attempt++) {
      const thread = await this.#writer.threadFor(ctx, threadId, ns, put);
      this.#sessions.set(key, thread.sessionId, 1);
      try {
        return await this.#writer.putGeneral(ctx, thread, put);
      } catch (error) {
        // Another saver (or process) deleted the thread meanwhile: the put goes to the thread started anew, as a put
        // after the deletion would. (Twice at most: a thread deleted again and again is somebody else's loop.)
        if (attempt < 3 && error instanceof NotFoundError && error.kind === "session" && error.id === thread.sessionId) continue;
        throw error;
      }
    }
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
    await ctx.store.write({ sessionId } /*SCOPE?*/, function* (tx) {
      const thread = this.#writer.threadTx(ctx, userId, threadId, ns);
      yield* tx.langgraph.insertWrites(
        rows.map((r) => ({ sessionId: thread.sessionId, ...r })),
        special,
      );
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
    const sessions = await ctx.store.read(function* (tx) {
      return yield* tx.langgraph.threadSessions(userId, String(threadId));
    });
    // One transaction for all its namespaces: a refused one (a move in progress) leaves the whole thread.
    await deleteSessions(
      ctx,
      sessions.map((id) => ({ id, userId })),
      "skip",
    );
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
    const thread = await this.#writer.findThread(ctx, userId, id, ns);
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
    const found = await store.read(function* (tx) {
      if ("branchId" in target) {
        const branchId = parseInput(idSchema, target.branchId, "target.branchId");
        const branch = (yield* tx.getBranch(branchId));
        const thread = branch && (yield* tx.langgraph.threadOfSession(branch.sessionId));
        if (!branch || !thread || thread.userId !== userId) throw new NotFoundError("branch", branchId);
        ownedSession(store, thread.sessionId, userId);
        return { thread, at: checkpointAt(store, thread.sessionId, branch, headOf(store, branch).position) };
      }
      const checkpointId = parseInput(idSchema, (target as { checkpointId: unknown }).checkpointId, "target.checkpointId");
      const cp = (yield* tx.getCheckpoint(checkpointId));
      const thread = cp && cp.userId === userId ? (yield* tx.langgraph.threadOfSession(cp.sessionId)) : undefined;
      if (cp && thread && thread.userId === userId) {
        sessionCheckpoint(store, ownedSession(store, cp.sessionId, userId), checkpointId, ctx.now());
        const lg = (yield* tx.langgraph.checkpointInFp(cp.id));
        if (lg) return { thread, at: { kind: "stored", row: lg } };
        return { thread, at: checkpointAt(store, cp.sessionId, (yield* tx.getBranch(cp.branchId))!, cp.position, "point") };
      }
      // A LangGraph checkpoint id: unique within a thread, so looked up among the user's threads.
      const rows = (yield* tx.langgraph.listCheckpoints({ userId, checkpointId, metadata: [] }));
      if (rows.length === 0) throw new NotFoundError("checkpoint", checkpointId);
      if (rows.length > 1)
        throw new ConflictError(
          `LangGraph checkpoint ${checkpointId} is in several threads: name its forkpoint checkpoint instead`,
          "AMBIGUOUS_CHECKPOINT",
        );
      return { thread: (yield* tx.langgraph.threadOfSession(rows[0]!.sessionId))!, at: { kind: "stored", row: rows[0]! } };
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
    if (options !== undefined && (options === null || typeof options !== "object"))
      throw new ValidationError("options", "must be an object");
    return options?.userId === undefined ? this.#userId : parseInput(idSchema, options.userId, "options.userId");
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
