// ForkpointSaver's reading back: LangGraph checkpoint tuples rebuilt from what a thread's session holds.
// A stored checkpoint comes from its row, its blobs and the session's messages (verified as `restore` verifies, on top
// of what the saver verified before); a checkpoint synthesized at a point of the session's tree (`thread-head.ts`),
// from its base and the messages there; each with the pending writes made under its id.
import {
  JsonPlusSerializer,
  TASKS,
  maxChannelVersion,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type SerializerProtocol,
} from "@langchain/langgraph-checkpoint";
import { NotFoundError } from "../models/errors.js";
import type { JsonValue } from "../models/json.js";
import type { EntryRow, LgBlobRow, LgCheckpointRow, LgThreadRow, LineageSegment, Step, Store, Tx } from "../store/port/index.js";
import {
  readVerifiedAfter,
  readVerifiedPoint,
  type EngineContext,
  type LineagePoint,
  type VerifiedLineage,
} from "../sessions/langgraph-bridge.js";
import { deltaMessagesAt } from "./channel-values.js";
import { mirrorOf } from "./mirror-cache.js";
import { revivalOf, revive, type Revival } from "./revived-items.js";
import { configOf, serializeItems, sortedWrites, versionKey, type SaverParts, type ThreadName } from "./saver-parts.js";
import type { PointCheckpoint, Synthesized } from "./thread-head.js";
import { isBinaryItem } from "./verified-items.js";
import { WeightedLru } from "./weighted-lru.js";

/** How many stored items' revivals a saver keeps (each about its item's size again), least recently used out first. */
const MAX_REVIVALS = 200_000;

const JSON_PLUS = JsonPlusSerializer.prototype as unknown as { loadsTyped: unknown; _loads: unknown };

/** LangGraph's `JsonPlusSerializer` reading as it was written: not a subclass, and no method of it replaced. */
function isOwnJsonSerializer(serde: SerializerProtocol): boolean {
  const s = serde as unknown as { loadsTyped: unknown; _loads?: unknown };
  return (
    Object.getPrototypeOf(serde) === JsonPlusSerializer.prototype && s.loadsTyped === JSON_PLUS.loadsTyped && s._loads === JSON_PLUS._loads
  );
}

/** Reads a thread's checkpoints back as LangGraph's tuples. */
export class CheckpointReader {
  readonly #parts: SaverParts;
  /** By stored text: how to rebuild that item without the serializer, or null when it cannot be (`revived-items.ts`). */
  readonly #revivals = new WeightedLru<Revival | null>(MAX_REVIVALS);

  constructor(parts: SaverParts) {
    this.#parts = parts;
  }

  /** The tuple of a stored or synthesized checkpoint; undefined when the thread was deleted meanwhile. */
  pointTuple(ctx: EngineContext, thread: LgThreadRow, at: PointCheckpoint, mirror: boolean): Promise<CheckpointTuple | undefined> {
    return at.kind === "stored" ? this.tupleIfThere(ctx, thread, at.row, mirror) : this.synthesizedTuple(ctx, thread, at.synth, mirror);
  }

  /**
   * The checkpoint synthesized at a point (`thread-head.ts`): its base's channel values, with the messages channel
   * the session's messages there (a new version when they differ from the base's), unless the base keeps that channel
   * as LangGraph's deltas (`deltaMessagesAt`); the writes made since under its id.
   */
  async synthesizedTuple(
    ctx: EngineContext,
    thread: LgThreadRow,
    synth: Synthesized,
    mirror: boolean,
  ): Promise<CheckpointTuple | undefined> {
    const sessionId = thread.sessionId;
    const base = synth.base ? await this.tupleIfThere(ctx, thread, synth.base, false) : undefined;
    if (synth.base && !base) return undefined;
    const messages = this.#parts.messages;
    const values: Record<string, unknown> = { ...(base?.checkpoint.channel_values ?? {}) };
    const versions: ChannelVersions = { ...(base?.checkpoint.channel_versions ?? {}) };
    // A base that keeps its messages as LangGraph's deltas (`MessagesDeltaValue`): the session does not hold them.
    const baseKeeps =
      base !== undefined &&
      deltaMessagesAt(
        synth.base!,
        versions[messages] !== undefined,
        messages in values ? { stored: true, value: values[messages] } : { stored: false },
      );
    let read: { items: unknown[]; headHash: string } | undefined;
    if (!baseKeeps) {
      try {
        read = await this.readItemsAt(ctx.store, sessionId, synth.point);
      } catch (error) {
        if (error instanceof NotFoundError && error.kind === "session" && error.id === sessionId) return undefined;
        throw error;
      }
    }
    if (synth.messagesVersion === undefined) {
      delete values[messages];
      delete versions[messages];
    } else if (read) {
      // A base whose graph trimmed its list (stored as a value: `trimmed-list.ts`): that list, then the messages since.
      const trimmed = base !== undefined && synth.base!.messagesVersion === null && Array.isArray(values[messages]);
      values[messages] = trimmed ? [...(values[messages] as unknown[]), ...read.items.slice(synth.baseCount)] : read.items;
      versions[messages] = synth.messagesVersion;
    }
    const checkpoint: Checkpoint = {
      v: 4,
      versions_seen: {},
      ...base?.checkpoint,
      id: synth.id,
      ts: synth.at > 0 ? new Date(synth.at).toISOString() : (base?.checkpoint.ts ?? new Date(0).toISOString()),
      channel_values: values,
      channel_versions: versions,
    };
    const step = typeof base?.metadata?.step === "number" ? base.metadata.step : -1;
    const metadata = { ...base?.metadata, source: "update", step: step + 1, parents: base?.metadata?.parents ?? {} } as CheckpointMetadata;
    const writes = await ctx.store.read((tx) => sortedWrites(tx, sessionId, synth.id));
    const pendingWrites: CheckpointPendingWrite[] = await Promise.all(
      writes.map(async (w): Promise<CheckpointPendingWrite> => [w.taskId, w.channel, await this.#parts.serde.loadsTyped(w.type, w.value)]),
    );
    if (mirror && read && synth.messagesVersion !== undefined && values[messages] === read.items)
      this.#parts.cache.set(sessionId, { ...mirrorOf(read.items), headHash: read.headHash, checkpointId: synth.id });
    const tuple: CheckpointTuple = { config: configOf(this.#parts, thread, synth.id), checkpoint, metadata, pendingWrites };
    if (base) tuple.parentConfig = base.config;
    return tuple;
  }

  /** `tuple`, or undefined when the thread was deleted (another saver's `deleteThread`) while it was being read. */
  async tupleIfThere(ctx: EngineContext, thread: ThreadName, row: LgCheckpointRow, mirror: boolean): Promise<CheckpointTuple | undefined> {
    try {
      return await this.tuple(ctx, thread, row, mirror);
    } catch (error) {
      if (error instanceof NotFoundError && error.kind === "checkpoint" && error.id === row.checkpointId) return undefined;
      throw error;
    }
  }

  async deserializeItems(items: JsonValue[]): Promise<unknown[]> {
    if (!items.some(isBinaryItem)) return (await this.#parts.serde.loadsTyped("json", JSON.stringify(items))) as unknown[];
    return Promise.all(
      items.map((x) =>
        isBinaryItem(x)
          ? this.#parts.serde.loadsTyped(x.__lg_type, Buffer.from(x.base64, "base64"))
          : this.#parts.serde.loadsTyped("json", JSON.stringify(x)),
      ),
    );
  }

  /**
   * The messages channel of a checkpoint (for `getTuple`), verified as `restore` verifies, except that the entries
   * the thread's `VerifiedItems` already hold (verified before, by this saver) are taken from there.
   */
  readItems(store: Store, row: LgCheckpointRow): Promise<{ items: unknown[]; headHash: string }> {
    return this.readItemsWith(store, row.sessionId, (tx, known) => readItemsUnit(tx, known, row));
  }

  /** The messages channel at a point no LangGraph checkpoint marks (a synthesized one's), its chain verified. */
  readItemsAt(store: Store, sessionId: string, point: LineagePoint): Promise<{ items: unknown[]; headHash: string }> {
    return this.readItemsWith(store, sessionId, (tx, known) => readItemsAtUnit(tx, known, sessionId, point));
  }

  async readItemsWith(
    store: Store,
    sessionId: string,
    /** The verified read, in a read unit: the entries after those `known` holds. */
    verifiedRead: (
      tx: Tx,
      known: VerifiedLineage | undefined,
    ) => Step<{ headHash: string; shared: number; fresh: EntryRow[]; segments: LineageSegment[] }>,
  ): Promise<{ items: unknown[]; headHash: string }> {
    const known = this.#parts.verified.get(sessionId);
    const read = await store.read((tx) => verifiedRead(tx, known?.lineage));
    const grown = this.#parts.verified.read(sessionId, known, read);
    const list = `[${grown.texts.join(",")}]`;
    const own = isOwnJsonSerializer(this.#parts.serde);
    const items = grown.binary
      ? await this.deserializeItems(grown.texts.map((t) => JSON.parse(t) as JsonValue))
      : grown.plain && own
        ? // What LangGraph's own serializer would give back (`isPlainText`), without its walk of every value.
          (JSON.parse(list) as unknown[])
        : own
          ? await this.reviveItems(grown.texts)
          : ((await this.#parts.serde.loadsTyped("json", list)) as unknown[]);
    return { items, headHash: read.headHash };
  }

  /**
   * The items stored as `texts`, as LangGraph's own serializer revives them, fresh objects each time: a text revived
   * before is rebuilt from its revival (`revived-items.ts`); the rest go through the serializer, in one call, and
   * their revivals are taken for the next read.
   */
  async reviveItems(texts: readonly string[]): Promise<unknown[]> {
    const items: unknown[] = new Array(texts.length);
    const missing: number[] = [];
    for (let i = 0; i < texts.length; i++) {
      const r = this.#revivals.get(texts[i]!);
      if (!r) missing.push(i);
      else {
        try {
          items[i] = revive(r);
        } catch {
          this.#revivals.set(texts[i]!, null, 1);
          missing.push(i);
        }
      }
    }
    if (missing.length === 0) return items;
    const loaded = (await this.#parts.serde.loadsTyped("json", `[${missing.map((i) => texts[i]).join(",")}]`)) as unknown[];
    for (let k = 0; k < missing.length; k++) {
      const i = missing[k]!,
        text = texts[i]!;
      if (this.#revivals.peek(text) === undefined) {
        this.#revivals.set(text, await revivalOf(loaded[k], text, async (x) => (await serializeItems(this.#parts, [x]))[0]!), 1);
      }
      items[i] = loaded[k];
    }
    return items;
  }

  /** Rebuilds a stored checkpoint: its channel values from the messages and the blobs, its pending writes. */
  async tuple(
    ctx: EngineContext,
    thread: ThreadName,
    row: LgCheckpointRow,
    /** `getTuple`'s read: LangGraph goes on from this checkpoint (the latest, or an older one to fork from). */
    mirror: boolean,
  ): Promise<CheckpointTuple> {
    const store = ctx.store;
    const skeleton = (await this.#parts.serde.loadsTyped(row.type, row.checkpoint)) as Omit<Checkpoint, "channel_values">;
    const metadata = (await this.#parts.serde.loadsTyped(row.metadataType, row.metadata)) as CheckpointMetadata;
    const versions = skeleton.channel_versions ?? {};
    const messages = this.#parts.messages;
    const { blobs, writes, sends } = await store.read((tx) => tupleUnit(tx, row, versions, messages, skeleton));
    const values: Record<string, unknown> = {};
    for (const [ch, blob] of blobs) if (blob) values[ch] = await this.#parts.serde.loadsTyped(blob.type, blob.value);
    if (row.messagesVersion !== null && versionKey(versions[this.#parts.messages]) === row.messagesVersion) {
      const { items, headHash } = await this.readItems(store, row);
      values[this.#parts.messages] = items;
      // LangGraph goes on from the checkpoint it read with these very objects: the next put finds them cached.
      if (mirror) this.#parts.cache.set(row.sessionId, { ...mirrorOf(items), headHash, checkpointId: row.checkpointId });
    }
    const checkpoint = { ...skeleton, channel_values: values } as Checkpoint;
    if (sends.length > 0) {
      // Checkpoints before format 4 kept the sends of the step before them as writes of their parent.
      checkpoint.channel_values[TASKS] = await Promise.all(sends.map((w) => this.#parts.serde.loadsTyped(w.type, w.value)));
      const all = Object.values(checkpoint.channel_versions);
      checkpoint.channel_versions = {
        ...checkpoint.channel_versions,
        [TASKS]: all.length > 0 ? maxChannelVersion(...all) : this.#parts.nextVersion(undefined),
      };
    }
    const pendingWrites: CheckpointPendingWrite[] = await Promise.all(
      writes.map(async (w): Promise<CheckpointPendingWrite> => [w.taskId, w.channel, await this.#parts.serde.loadsTyped(w.type, w.value)]),
    );
    const tuple: CheckpointTuple = { config: configOf(this.#parts, thread, row.checkpointId), checkpoint, metadata, pendingWrites };
    if (row.parentCheckpointId !== null) tuple.parentConfig = configOf(this.#parts, thread, row.parentCheckpointId);
    return tuple;
  }
}

function* tupleUnit(
  tx: Tx,
  row: LgCheckpointRow,
  versions: ChannelVersions,
  messages: string,
  skeleton: Omit<Checkpoint<string, string>, "channel_values">,
) {
  // Read apart from the row (after an await): the thread may have been deleted since.
  if (!(yield* tx.langgraph.getCheckpoint(row.sessionId, row.checkpointId))) throw new NotFoundError("checkpoint", row.checkpointId);
  const blobs: (readonly [string, LgBlobRow | undefined])[] = [];
  for (const [ch, v] of Object.entries(versions)) {
    if (ch === messages && row.messagesVersion === versionKey(v)) continue;
    blobs.push([ch, yield* tx.langgraph.getBlob(row.sessionId, ch, versionKey(v))]);
  }
  return {
    blobs,
    writes: yield* sortedWrites(tx, row.sessionId, row.checkpointId),
    sends:
      (skeleton.v ?? 4) < 4 && row.parentCheckpointId !== null
        ? (yield* sortedWrites(tx, row.sessionId, row.parentCheckpointId)).filter((w) => w.channel === TASKS)
        : [],
  };
}

function* readItemsAtUnit(tx: Tx, known: VerifiedLineage | undefined, sessionId: string, point: LineagePoint) {
  // Read apart from the head (after an await): the thread may have been deleted since.
  if (!(yield* tx.langgraph.threadOfSession(sessionId))) throw new NotFoundError("session", sessionId);
  return { headHash: point.hash, ...(yield* readVerifiedPoint(tx, point, known)) };
}

function* readItemsUnit(tx: Tx, known: VerifiedLineage | undefined, row: LgCheckpointRow) {
  // Read apart from the row (after an await): the thread may have been deleted since.
  if (!(yield* tx.langgraph.getCheckpoint(row.sessionId, row.checkpointId))) throw new NotFoundError("checkpoint", row.checkpointId);
  const cp = yield* tx.getCheckpoint(row.fpCheckpointId);
  if (!cp || cp.sessionId !== row.sessionId) throw new NotFoundError("checkpoint", row.fpCheckpointId);
  return { headHash: cp.headHash, ...(yield* readVerifiedAfter(tx, cp, known)) };
}
