// What ForkpointSaver's parts share: the saver's settings and caches, and the small helpers each of them needs.
// The parts: its calls (a file each), its reading back, its put planning and writing. The helpers: configs, users,
// versions, pending writes, serializing a list.
import type { LandingPuts } from "./landing-puts.js";
import type { RunnableConfig } from "@langchain/core/runnables";
import { compareWritesSortKeys, getCheckpointId, writesSortKey, type SerializerProtocol } from "@langchain/langgraph-checkpoint";
import { ValidationError } from "../models/errors.js";
import { idSchema, parseInput } from "../models/inputs.js";
import { DEFAULT_LIMITS } from "../models/limits.js";
import { assertPlainText } from "../models/strings.js";
import type { JsonValue } from "../models/json.js";
import type { LgThreadRow, LgWriteRow, Step, Tx } from "../store/port/index.js";
import type { EngineContext } from "../sessions/langgraph-bridge.js";
import { FIRST_ASKED } from "./first-asked.js";
import { RESUMED_ON } from "./resumed-on.js";
import { PRIOR, WRITTEN_ON } from "./written-on.js";
import { PUT_ON } from "./put-on.js";
import { WENT_ON } from "./went-on.js";
import { FORKED } from "./saver-fork.js";
import { RAN_ON } from "./ran-on.js";
import type { MirrorCache } from "./mirror-cache.js";
import type { RunCalls } from "./run-calls.js";
import type { VerifiedItemsCache } from "./verified-items.js";
import type { WeightedLru } from "./weighted-lru.js";

/** The saver's settings and per-thread caches, as its parts see them. */
export interface SaverParts {
  serde: SerializerProtocol;
  /** The channel kept as the session's messages. */
  messages: string;
  /** The user of runs whose config names none. */
  defaultUserId: string;
  /** Each thread's messages as last stored or read (`mirror-cache.ts`). */
  cache: MirrorCache;
  /** Each thread's verified lineage and message texts (`verified-items.ts`). */
  verified: VerifiedItemsCache;
  /** The session of each thread the saver has read or put to (`threadKey`): where a put tries its one-transaction path. */
  sessions: WeightedLru<string>;
  /** Each thread's puts still landing (`sessionFor` waits for them). */
  landing: LandingPuts;
  /**
   * Each thread's latest put refused because the thread moved (its checkpoint id), until a run of the thread starts
   * (`getTuple`): LangGraph issues none of that run's later puts, and its nodes' calls are refused (`moved-run-guard.ts`).
   */
  stopped: WeightedLru<string>;
  /** Which run of a thread's graph made each call its nodes journaled, in this process (`run-calls.ts`). */
  runs: RunCalls;
  /** The saver's `getNextVersion`. */
  nextVersion: (current: number | undefined) => number;
  /** The engine behind the saver's Forkpoint, once recovery at open is done (throws once it is closed). */
  engine: () => Promise<EngineContext>;
}

/** What names a thread: its user, id and namespace. */
export type ThreadName = Pick<LgThreadRow, "userId" | "threadId" | "checkpointNs">;

const utf8 = new TextDecoder();

/** Versions are compared as their JSON: 1 and "1" are different versions. */
export const versionKey = (v: unknown): string => JSON.stringify(v);

/** A thread's key in the saver's session map (a clash through a NUL in a name only costs a put its fast path). */
export const threadKey = (userId: string, threadId: string, ns: string): string => `${userId}\0${ns}\0${threadId}`;

/** The config of a thread's checkpoint, naming the thread's user when it is not the saver's default. */
export function configOf(parts: SaverParts, thread: ThreadName, checkpointId: string): RunnableConfig {
  const configurable: Record<string, unknown> = {
    thread_id: thread.threadId,
    checkpoint_ns: thread.checkpointNs,
    checkpoint_id: checkpointId,
  };
  if (thread.userId !== parts.defaultUserId) configurable.userId = thread.userId;
  return { configurable };
}

/**
 * What a LangGraph config names: thread, namespace (undefined when absent) and checkpoint (undefined when empty; named
 * by `checkpoint_id`, or by the older `thread_ts`, as LangGraph's `getCheckpointId` reads it).
 */
export function threadConfig(config: RunnableConfig): { threadId?: string; ns?: string; checkpointId?: string } {
  const c = config.configurable ?? {};
  const checkpointId = getCheckpointId(config);
  return {
    threadId: c.thread_id === undefined || c.thread_id === null ? undefined : String(c.thread_id),
    ns: typeof c.checkpoint_ns === "string" ? c.checkpoint_ns : undefined,
    checkpointId: typeof checkpointId === "string" && checkpointId !== "" ? checkpointId : undefined,
  };
}

/**
 * Refuses what the saver cannot store as one of its keys (a thread, namespace, checkpoint, channel, version or task
 * id), alike on every store: a lone surrogate or a NUL (`MALFORMED_TEXT`), or more than the engine's ids take
 * (512 characters): PostgreSQL's B-tree indexes over those keys hold a few kilobytes a row.
 */
export function assertSaverKey(text: string, field: string): void {
  assertPlainText(text, field);
  const max = DEFAULT_LIMITS.maxStringField;
  if (text.length > max) throw new ValidationError(field, `must be at most ${max} characters`);
}

/**
 * Refuses, as a put does, a thread, namespace or checkpoint id a read is given that no put stores: a lone surrogate or
 * a NUL (`MALFORMED_TEXT`), or one past the length limit (`ValidationError`). Reads thus answer alike on every store
 * (PostgreSQL's text cannot even be queried with a NUL), and a caller with such an id hears of it, as from a put.
 */
export function assertReadNames(names: { threadId?: string; ns?: string; checkpointId?: string }): void {
  if (names.threadId !== undefined) assertSaverKey(names.threadId, "config.configurable.thread_id");
  if (names.ns !== undefined) assertSaverKey(names.ns, "config.configurable.checkpoint_ns");
  if (names.checkpointId !== undefined) assertSaverKey(names.checkpointId, "config.configurable.checkpoint_id");
}

/**
 * The user a run's config names (`configurable.userId`, or `configurable.user_id`), else the saver's: one saver
 * serves many users, each with their own threads (alice's "t1" and bob's "t1" are two sessions).
 */
export function userOf(parts: SaverParts, config: RunnableConfig | undefined): string {
  const c = (config?.configurable ?? {}) as Record<string, unknown>;
  const [camel, snake] = [c.userId ?? undefined, c.user_id ?? undefined];
  if (camel !== undefined && snake !== undefined && camel !== snake) {
    throw new ValidationError("config.configurable.user_id", "differs from config.configurable.userId");
  }
  if (camel === undefined && snake === undefined) return parts.defaultUserId;
  return parseInput(idSchema, camel ?? snake, camel !== undefined ? "config.configurable.userId" : "config.configurable.user_id");
}

/** The user an options object names, else the saver's. */
export function userIn(parts: SaverParts, options: { userId?: string } | undefined): string {
  if (options !== undefined && (options === null || typeof options !== "object")) throw new ValidationError("options", "must be an object");
  return options?.userId === undefined ? parts.defaultUserId : parseInput(idSchema, options.userId, "userId");
}

/**
 * A checkpoint's pending writes in the order LangGraph applies them: (task path, task id, index). Not the first
 * interrupts kept of tasks that asked again (`first-asked.ts`): those are served only in place of their task's; nor
 * the marks of where resume values and results were stored (`resumed-on.ts`, `written-on.ts`) or a continuation
 * pruned (`went-on.ts`), a saver's fork (`saver-fork.ts`) or a run's call (`ran-on.ts`), nor the rows a task's later run replaced, kept aside (`written-on.ts`).
 */
export function* sortedWrites(tx: Tx, sessionId: string, checkpointId: string): Step<LgWriteRow[]> {
  return (yield* tx.langgraph.writesOf(sessionId, checkpointId))
    .filter(
      (w) =>
        w.channel !== FIRST_ASKED &&
        w.channel !== RESUMED_ON &&
        w.channel !== WRITTEN_ON &&
        w.channel !== PUT_ON &&
        w.channel !== WENT_ON &&
        w.channel !== FORKED &&
        w.channel !== RAN_ON &&
        !w.taskId.startsWith(PRIOR),
    )
    .sort((a, b) => compareWritesSortKeys(writesSortKey(a.taskPath, a.taskId, a.idx), writesSortKey(b.taskPath, b.taskId, b.idx)));
}

/** The items as LangGraph's serializer writes them: one call for the whole list (per item only for binary ones). */
export async function serializeItems(parts: SaverParts, items: readonly unknown[]): Promise<JsonValue[]> {
  if (items.length === 0) return [];
  const [type, body] = await parts.serde.dumpsTyped(items);
  if (type === "json") {
    const list = JSON.parse(utf8.decode(body)) as JsonValue;
    // LangGraph's serializer gives a string ("[unable to serialize, …]") for a value it cannot write.
    if (!Array.isArray(list) || list.length !== items.length) {
      throw new ValidationError(
        `checkpoint.channel_values.${parts.messages}`,
        `cannot be serialized by the saver's serializer (it wrote ${JSON.stringify(list).slice(0, 80)})`,
      );
    }
    return list;
  }
  return Promise.all(
    items.map(async (item) => {
      const [t, b] = await parts.serde.dumpsTyped(item);
      return t === "json" ? (JSON.parse(utf8.decode(b)) as JsonValue) : { __lg_type: t, base64: Buffer.from(b).toString("base64") };
    }),
  );
}
