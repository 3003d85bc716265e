// ForkpointSaver's getDeltaChannelHistory: the pending writes and seed LangGraph rebuilds a DeltaChannel from.
// As the base class walks it (parent after parent from the checkpoint's parent, each checkpoint's writes in
// `writesSortKey` order, a channel's walk ending at the first checkpoint that stores its value), with two differences:
// a checkpoint synthesized at a point of the session (`thread-head.ts`) holds its base's values, so the walk goes on
// from its base's parent, never through the base's own writes (they led elsewhere: the step the session moved away
// from); and the messages channel is read from the session only where it is a channel's seed.
import type { RunnableConfig } from "@langchain/core/runnables";
import type { CheckpointPendingWrite, DeltaChannelHistory } from "@langchain/langgraph-checkpoint";
import { ValidationError } from "../models/errors.js";
import type { LgBlobRow, LgCheckpointRow, LgThreadRow, LgWriteRow, Step, Tx } from "../store/port/index.js";
import type { EngineContext } from "../sessions/langgraph-bridge.js";
import { mirroredAt, parentOf, rowVersions, type ValuesNode } from "./channel-values.js";
import type { CheckpointReader } from "./checkpoint-reader.js";
import { readPlace } from "./get-tuple.js";
import { assertReadNames, sortedWrites, threadConfig, userOf, type SaverParts } from "./saver-parts.js";
import { resolveSynthesized, type Synthesized } from "./thread-head.js";

/** For each channel asked for, the writes on the path to the checkpoint `config` names (its head without an id), and their seed. */
export async function getDeltaChannelHistory(
  parts: SaverParts,
  reader: CheckpointReader,
  options: { config: RunnableConfig; channels: string[] },
): Promise<Record<string, DeltaChannelHistory>> {
  if (options === null || typeof options !== "object") throw new ValidationError("options", "must be { config, channels }");
  const { config, channels } = options;
  if (!Array.isArray(channels) || !channels.every((c) => typeof c === "string")) {
    throw new ValidationError("options.channels", "must be an array of channel names");
  }
  if (channels.length === 0) return {};
  if (config === null || typeof config !== "object") throw new ValidationError("options.config", "must be a RunnableConfig object");
  const collected = new Map(channels.map((c) => [c, [] as CheckpointPendingWrite[]]));
  const seeds = new Map<string, unknown>();
  const result = (): Record<string, DeltaChannelHistory> =>
    Object.fromEntries(
      channels.map((c) => [c, { writes: collected.get(c)!.slice().reverse(), ...(seeds.has(c) ? { seed: seeds.get(c) } : {}) }]),
    );
  const { threadId, ns = "", checkpointId } = threadConfig(config);
  if (threadId === undefined) return result();
  assertReadNames({ threadId, ns, checkpointId });
  const userId = userOf(parts, config);
  const ctx = await parts.engine();
  const found = await readPlace(ctx, userId, threadId, ns, checkpointId);
  if (!found) return result();
  const { thread, at } = found;
  const remaining = new Set(channels);
  const visited = new Set<string>();
  let cursor = at.kind === "stored" ? at.row.parentCheckpointId : (at.synth.base?.parentCheckpointId ?? null);
  while (cursor !== null && remaining.size > 0 && !visited.has(cursor)) {
    visited.add(cursor);
    const id = cursor;
    const step = await ctx.store.read((tx) => stepUnit(tx, thread.sessionId, id));
    if (!step) break;
    const node = await valuesNode(parts, step);
    // This checkpoint's writes produced its child on the path: newest first here, reversed at the end (as the base class does).
    const writes = step.writes.filter((w) => remaining.has(w.channel));
    for (let i = writes.length - 1; i >= 0; i--) {
      const w = writes[i]!;
      collected.get(w.channel)!.push([w.taskId, w.channel, await parts.serde.loadsTyped(w.type, w.value)]);
    }
    const values = await valuesAt(parts, reader, ctx, thread, node, [...remaining]);
    for (const [channel, value] of values) {
      seeds.set(channel, value);
      remaining.delete(channel);
    }
    cursor = parentOf(node);
  }
  return result();
}

/** A checkpoint on the path, stored or synthesized at a point, and the writes made under its id. */
type StepRead = { id: string; writes: LgWriteRow[] } & ({ row: LgCheckpointRow } | { synth: Synthesized });

/** The checkpoint `id` names in the session and its writes, in one read unit (undefined: none, or pruned). */
function* stepUnit(tx: Tx, sessionId: string, id: string): Step<StepRead | undefined> {
  const writes = yield* sortedWrites(tx, sessionId, id);
  const row = yield* tx.langgraph.getCheckpoint(sessionId, id);
  if (row) return { id, row, writes };
  const synth = yield* resolveSynthesized(tx, sessionId, id);
  return synth && { id, synth, writes };
}

async function valuesNode(parts: SaverParts, step: StepRead): Promise<ValuesNode> {
  if ("row" in step) return { kind: "stored", id: step.id, row: step.row, versions: await rowVersions(parts, step.row) };
  const base = step.synth.base;
  return {
    kind: "synthesized",
    id: step.id,
    synth: step.synth,
    ...(base ? { base: { row: base, versions: await rowVersions(parts, base) } } : {}),
  };
}

/**
 * The stored values of `channels` at a node (those it has no value of are left out). A stored checkpoint's come from
 * its blobs, and the messages channel from the session where the checkpoint mirrors it; a synthesized one's are what
 * its tuple holds (its base's, with the session's messages).
 */
async function valuesAt(
  parts: SaverParts,
  reader: CheckpointReader,
  ctx: EngineContext,
  thread: LgThreadRow,
  node: ValuesNode,
  channels: string[],
): Promise<Map<string, unknown>> {
  const out = new Map<string, unknown>();
  if (node.kind === "synthesized") {
    const tuple = await reader.synthesizedTuple(ctx, thread, node.synth, false);
    const values = (tuple?.checkpoint.channel_values ?? {}) as Record<string, unknown>;
    for (const c of channels) if (Object.prototype.hasOwnProperty.call(values, c) && values[c] !== undefined) out.set(c, values[c]);
    return out;
  }
  const { row, versions } = node;
  const wanted = channels.filter((c) => versions.versions.has(c));
  if (wanted.length === 0) return out;
  const keys = wanted
    .filter((c) => c !== parts.messages || !mirroredAt(parts, row, versions))
    .map((c) => [c, versions.versions.get(c)!] as const);
  const blobs = await ctx.store.read((tx) => blobsUnit(tx, row.sessionId, keys));
  for (const blob of blobs) out.set(blob.channel, await parts.serde.loadsTyped(blob.type, blob.value));
  // The messages channel mirrored here: a plain list seed (a thread whose messages channel became a DeltaChannel).
  if (wanted.includes(parts.messages) && mirroredAt(parts, row, versions))
    out.set(parts.messages, (await reader.readItems(ctx.store, row)).items);
  return out;
}

function* blobsUnit(tx: Tx, sessionId: string, keys: readonly (readonly [channel: string, version: string])[]): Step<LgBlobRow[]> {
  const found: LgBlobRow[] = [];
  for (const [channel, version] of keys) {
    const blob = yield* tx.langgraph.getBlob(sessionId, channel, version);
    if (blob) found.push(blob);
  }
  return found;
}
