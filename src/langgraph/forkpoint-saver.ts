// ForkpointSaver: LangGraph.js's checkpointer interface on a forkpoint database, a thin class over its parts.
// Each thread (and namespace) is a forkpoint session of one user; each LangGraph checkpoint is a forkpoint checkpoint;
// the messages channel is the session's messages, appended once each (not rewritten whole at every step, as other
// savers do); a put from an older checkpoint (time travel, a fork) is a rollback, or an edit when the messages differ,
// so the session's tree holds every version. Other channels are stored once per version, pending writes beside them.
// Both ways: a thread's head is its session's current position (`thread-head.ts`). Each of LangGraph's calls has its
// file (`get-tuple.ts`, `list-checkpoints.ts`, `put-checkpoint.ts`, `put-writes.ts`, `delete-thread.ts`,
// `delta-history.ts`, `prune.ts`, and the bridge's `session-for.ts` and `config-for.ts`); their parts read checkpoints
// back (`checkpoint-reader.ts`), plan puts (`put-plan.ts`) and write them (`put-writer.ts`), and weigh what a prune
// keeps (`prune-plan.ts`, over `channel-values.ts`).
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type DeltaChannelHistory,
  type PendingWrite,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import { ValidationError } from "../models/errors.js";
import { langGraphSaverOptions, parseOptions } from "../models/inputs.js";
import { engineOf, type Forkpoint, type SessionHandle } from "../sessions/langgraph-bridge.js";
import { CheckpointReader } from "./checkpoint-reader.js";
import { configFor } from "./config-for.js";
import { deleteThread } from "./delete-thread.js";
import { getDeltaChannelHistory } from "./delta-history.js";
import { getTuple } from "./get-tuple.js";
import { listCheckpoints } from "./list-checkpoints.js";
import { MirrorCache } from "./mirror-cache.js";
import { putCheckpoint } from "./put-checkpoint.js";
import { prune, type PruneThreadsOptions } from "./prune.js";
import { PutWriter } from "./put-writer.js";
import { putWrites } from "./put-writes.js";
import { LandingPuts } from "./landing-puts.js";
import type { SaverParts } from "./saver-parts.js";
import { RunCalls } from "./run-calls.js";
import { sessionFor } from "./session-for.js";
import { VerifiedItemsCache } from "./verified-items.js";
import { WeightedLru } from "./weighted-lru.js";

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
/** How many threads' refused puts the saver remembers. */
const MAX_STOPPED_THREADS = 10_000;

/** What tells a thread's runs apart, shared by every saver on one Forkpoint (engine). */
const tracking = new WeakMap<object, Pick<SaverParts, "stopped" | "runs">>();

/**
 * The runs' calls and the stopped runs of every saver on the Forkpoint whose engine is `ctx`: puts land one at a time
 * in a process, whichever saver makes them, and a run's nodes may journal through another saver's `sessionFor`.
 */
function runTracking(ctx: object): Pick<SaverParts, "stopped" | "runs"> {
  let shared = tracking.get(ctx);
  if (!shared) {
    shared = { stopped: new WeightedLru<string>(MAX_STOPPED_THREADS), runs: new RunCalls() };
    tracking.set(ctx, shared);
  }
  return shared;
}

/**
 * A LangGraph.js checkpointer (`BaseCheckpointSaver`) that stores threads as forkpoint sessions.
 * @example
 * const saver = new ForkpointSaver(fp, { userId: "alice" });
 * const graph = workflow.compile({ checkpointer: saver });
 * await graph.invoke({ messages: [{ role: "user", content: "hi" }] }, { configurable: { thread_id: "t1" } });
 */
export class ForkpointSaver extends BaseCheckpointSaver {
  readonly #fp: Forkpoint;
  readonly #parts: SaverParts;
  readonly #reader: CheckpointReader;
  readonly #writer: PutWriter;

  constructor(fp: Forkpoint, options: ForkpointSaverOptions = {}) {
    // Checked before LangGraph's constructor reads `serde`: an option whose getter throws is a bad option.
    const o = parseOptions(langGraphSaverOptions, options, "options");
    super(o.serde as SerializerProtocol | undefined);
    try {
      engineOf(fp);
    } catch {
      throw new ValidationError("fp", "must be a Forkpoint from openForkpoint()");
    }
    this.#fp = fp;
    this.#parts = {
      serde: this.serde,
      messages: o.messagesChannel ?? "messages",
      defaultUserId: o.userId ?? "langgraph",
      cache: new MirrorCache(),
      verified: new VerifiedItemsCache(),
      sessions: new WeightedLru<string>(MAX_KNOWN_THREADS),
      landing: new LandingPuts(engineOf(fp).ctx.landing),
      ...runTracking(engineOf(fp).ctx),
      nextVersion: (v) => this.getNextVersion(v),
      engine: async () => {
        const { ctx, guard } = engineOf(this.#fp);
        await guard();
        return ctx;
      },
    };
    this.#reader = new CheckpointReader(this.#parts);
    this.#writer = new PutWriter(this.#parts);
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
   * A checkpoint of a thread: the one `checkpoint_id` names (stored, or synthesized at a point), or without one the
   * thread's head, which is its session's current position (`thread-head.ts`): a forkpoint move or append on the
   * session is what the graph goes on from.
   */
  override getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    return getTuple(this.#parts, this.#reader, config);
  }

  override list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    return listCheckpoints(this.#parts, this.#reader, config, options);
  }

  override put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    return putCheckpoint(this.#parts, this.#writer, config, checkpoint, metadata, newVersions);
  }

  override putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string, taskPath = ""): Promise<void> {
    return putWrites(this.#parts, config, writes, taskId, taskPath);
  }

  /**
   * Deletes every namespace of the thread: its sessions, with all they recorded, and its saver rows. The thread is
   * `options.userId`'s (default: the saver's user).
   */
  override deleteThread(threadId: string, options?: { userId?: string }): Promise<void> {
    return deleteThread(this.#parts, threadId, options);
  }

  /**
   * Prunes threads of a user, as LangGraph's Python savers' `prune` does. `"delete"` deletes them (every namespace, as
   * `deleteThread`). `"keep_latest"` (the default) drops old checkpoints, per namespace, with their pending writes and
   * the channel values only they had, and keeps: the latest; what each branch's head is (the thread's head among them,
   * with a pending interrupt's writes); what each forkpoint checkpoint that is not LangGraph's own resumes from; those
   * a branch forks from; and the ancestors a kept checkpoint's DeltaChannels are rebuilt from. The session's messages
   * and tree stay whole. Unknown thread ids are passed over; bad arguments are a `ValidationError` and change nothing.
   * @example await saver.prune(["t1", "t2"], { strategy: "keep_latest" });
   */
  prune(threadIds: readonly string[], options?: PruneThreadsOptions): Promise<void> {
    return prune(this.#parts, threadIds, options);
  }

  /**
   * For each DeltaChannel LangGraph rebuilds at a checkpoint, the pending writes on the path to it (oldest first, each
   * checkpoint's in `writesSortKey` order) and the nearest stored value (its seed), as the base class walks them; a
   * checkpoint synthesized at a point of the session holds its base's values, so its walk starts at its base's parent.
   */
  override getDeltaChannelHistory(options: { config: RunnableConfig; channels: string[] }): Promise<Record<string, DeltaChannelHistory>> {
    return getDeltaChannelHistory(this.#parts, this.#reader, options);
  }

  /**
   * The forkpoint session a thread lives in, as `fp.getSession` gives it: its moves, appends and state changes are
   * what the graph goes on from. `NotFoundError` (kind "thread") when the user has no such thread.
   * @example const s = await saver.sessionFor("t1", { userId: "alice" }); await s.rollback(cp.id);
   */
  sessionFor(threadId: string, options?: { userId?: string; checkpointNs?: string }): Promise<SessionHandle> {
    return sessionFor(this.#parts, this, this.#fp, threadId, options);
  }

  /**
   * A LangGraph config (`{ configurable: { thread_id, checkpoint_ns, checkpoint_id } }`) to invoke a graph from:
   * `{ branchId }`, that branch's head; `{ checkpointId }`, a LangGraph checkpoint's own config, or for a forkpoint
   * checkpoint of a thread's session (a user's own), a checkpoint at its position that LangGraph resumes from (a
   * synthesized one where no LangGraph checkpoint sits: `thread-head.ts`). Invoked away from the thread's head, the
   * graph forks there, as LangGraph's time travel does. `NotFoundError` for ids that are not the user's threads'.
   * @example await graph.invoke(null, await saver.configFor({ checkpointId: cp.id }, { userId: "alice" }));
   */
  configFor(target: { branchId: string } | { checkpointId: string }, options?: { userId?: string }): Promise<RunnableConfig> {
    return configFor(this.#parts, target, options);
  }
}
