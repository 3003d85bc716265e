// ForkpointSaver's put: a checkpoint checked and serialized as put is called, then landed by `PutWriter`.
import type { RunnableConfig } from "@langchain/core/runnables";
import type { ChannelVersions, Checkpoint, CheckpointMetadata } from "@langchain/langgraph-checkpoint";
import { ConflictError, NotFoundError, ValidationError } from "../models/errors.js";
import { toJsonText } from "../models/json.js";
import { mirrorOf } from "./mirror-cache.js";
import { parentRunOf, refuseStoppedParentRun } from "./parent-run-guard.js";
import { serializeNew, type PreparedPut } from "./put-plan.js";
import type { PutWriter } from "./put-writer.js";
import { synthesizedPosition } from "./thread-head.js";
import { assertSaverKey, serializeItems, threadConfig, threadKey, userOf, versionKey, type SaverParts } from "./saver-parts.js";

/**
 * Stores `checkpoint` as the next one of its thread after the config's (its parent): at the session's head in one
 * transaction when the saver knows the thread's session and the put goes on from there, else by the general path
 * (the thread created on its first put, the session forked when the parent is not its head).
 */
export async function putCheckpoint(
  parts: SaverParts,
  writer: PutWriter,
  config: RunnableConfig,
  checkpoint: Checkpoint,
  metadata: CheckpointMetadata,
  newVersions: ChannelVersions,
): Promise<RunnableConfig> {
  if (!config?.configurable) throw new ValidationError("config.configurable", "is missing: it must hold thread_id");
  const { threadId, ns = "", checkpointId: parentId = null } = threadConfig(config);
  if (threadId === undefined || threadId === "") throw new ValidationError("config.configurable.thread_id", "is missing");
  if (typeof checkpoint?.id !== "string" || checkpoint.id === "") throw new ValidationError("checkpoint.id", "must be a non-empty string");
  assertSaverKey(threadId, "config.configurable.thread_id");
  assertSaverKey(ns, "config.configurable.checkpoint_ns");
  if (parentId !== null) assertSaverKey(parentId, "config.configurable.checkpoint_id");
  assertSaverKey(checkpoint.id, "checkpoint.id");
  for (const [channel, version] of Object.entries(newVersions ?? {})) {
    assertSaverKey(channel, "newVersions");
    assertSaverKey(versionKey(version), `newVersions.${channel}`);
  }
  const userId = userOf(parts, config);
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
  const list = (values as Record<string, unknown>)[parts.messages];
  let items: unknown[] | null = null;
  let messagesVersion: string | null = null;
  const serializing: Promise<[string, Uint8Array]>[] = [parts.serde.dumpsTyped(skeleton), parts.serde.dumpsTyped(metadata ?? {})];
  const channels: [string, string][] = [];
  for (const [channel, version] of Object.entries(newVersions ?? {})) {
    if (!Object.hasOwn(values, channel)) continue;
    if (channel === parts.messages && Array.isArray(list)) {
      items = list.slice();
      messagesVersion = versionKey(version);
      continue;
    }
    serializing.push(parts.serde.dumpsTyped((values as Record<string, unknown>)[channel]));
    channels.push([channel, versionKey(version)]);
  }
  // A parent synthesized on a trimmed base (`thread-head.ts`): the unchanged list is this checkpoint's to store.
  const unchangedVersion = (skeleton.channel_versions ?? {})[parts.messages];
  const unchanged =
    items === null &&
    Array.isArray(list) &&
    unchangedVersion !== undefined &&
    parentId !== null &&
    synthesizedPosition(parentId) !== undefined
      ? { value: parts.serde.dumpsTyped(list), version: versionKey(unchangedVersion) }
      : null;
  // Awaited only where the list is stored; a put that does not store it must not leave it rejected and unheard.
  unchanged?.value.catch(() => undefined);
  // A subgraph's put: its parent run's messages, as they are at the step that runs it.
  const parentRun = parentRunOf(parts, config, ns);
  const key = threadKey(userId, threadId, ns);
  const known = parts.sessions.get(key);
  const land = async (): Promise<RunnableConfig> => {
    if (parts.runs.stoppedRun(config)) throw stoppedRunPut(threadId);
    const early = known === undefined || items === null ? undefined : serializeNew(parts, known, items, parentId);
    const whole = items === null || early ? null : { mirrored: mirrorOf(items), serialized: serializeItems(parts, items) };
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

    const ctx = await parts.engine();
    const guard = parentRun ? await refuseStoppedParentRun(parts, ctx, userId, threadId, parentRun) : null;
    const run = parts.runs.runOf(config);
    const cpMetadata = toJsonText(
      { langgraph: { ...scalars(metadata), threadId, checkpointNs: ns, checkpointId: checkpoint.id, saverRun: run?.id } },
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
      unchanged,
      early,
      whole,
      messagesVersion,
      blobs,
      cpMetadata,
      lg: { type, checkpoint: Buffer.from(body), metadataType, metadata: Buffer.from(metadataBody) },
      guard,
      fromHead: ns === "" && metadata?.source === "input" && runFromThread(config),
      run,
      exit: exitDurability(config),
      rootStep: ns === "" ? undefined : rootStepOf(metadata),
    };
    parts.runs.goesOnFrom(config, checkpoint.id);
    if (known !== undefined) {
      const done = await ctx.withSessionLock(`langgraph-put:${known}`, () => writer.putAtHead(ctx, known, put));
      if (done) return done;
    }
    for (let attempt = 1; ; attempt++) {
      const thread = await writer.threadFor(ctx, threadId, ns, put);
      parts.sessions.set(key, thread.sessionId, 1);
      if (thread.sessionId !== known) parts.landing.toSession(thread.sessionId, landing);
      try {
        return await writer.putGeneral(ctx, thread, put);
      } catch (error) {
        // Another saver (or process) deleted the thread meanwhile: the put goes to the thread started anew, as a put
        // after the deletion would. (Twice at most: a thread deleted again and again is somebody else's loop.)
        if (attempt < 3 && error instanceof NotFoundError && error.kind === "session" && error.id === thread.sessionId) continue;
        throw error;
      }
    }
  };
  // Tracked from here (the rest runs at once up to its first await): `sessionFor` and the session's tool calls wait
  // for the thread's puts (`landing-puts.ts`).
  const landing: Promise<RunnableConfig> = land().catch((error: unknown) => {
    // A run stopped by a move of its thread: its nodes' calls are refused too (`moved-run-guard.ts`).
    if (error instanceof ConflictError && error.code === "SESSION_MOVED") parts.stopped.set(key, checkpoint.id, 1);
    throw error;
  });
  return parts.landing.add(key, landing, known);
}

/** The refusal of a put of a run one of whose nodes' calls was refused (`SESSION_MOVED`, `run-fork-guard.ts`). */
export const stoppedRunPut = (threadId: string) =>
  new ConflictError(
    `thread ${threadId}: a call of this run was refused (SESSION_MOVED), so the run cannot keep its own calls; ` +
      "the run is stopped: invoke the graph again to go on from where the session is now",
    "SESSION_MOVED",
  );

/**
 * Whether the put's run is one LangGraph started from the thread's latest checkpoint: LangGraph copies the run's
 * `thread_id` into its config's metadata, and its `checkpoint_id` when the run addressed one (time travel, a resume by
 * id), and hands that config to every put. A put made outside a run (no such metadata) is not taken for one.
 */
function runFromThread(config: RunnableConfig): boolean {
  const metadata = config.metadata as Record<string, unknown> | undefined;
  return metadata?.thread_id != null && metadata.checkpoint_id == null;
}

/** Whether the put's run runs under durability "exit" (LangGraph hands the run's config to its puts). */
function exitDurability(config: RunnableConfig): boolean {
  const { durability, checkpointDuring } = config as { durability?: unknown; checkpointDuring?: unknown };
  return durability === "exit" || (durability == null && checkpointDuring === false);
}

/** The root graph's checkpoint in LangGraph's `metadata.parents` of a subgraph's checkpoint, if it names one. */
function rootStepOf(metadata: CheckpointMetadata | undefined): string | undefined {
  const parents = (metadata as { parents?: unknown } | undefined)?.parents;
  const id = typeof parents === "object" && parents !== null ? (parents as Record<string, unknown>)[""] : undefined;
  return typeof id === "string" ? id : undefined;
}

/** The scalar fields of LangGraph's metadata (`source`, `step`, …), for the forkpoint checkpoint's own metadata. */
function scalars(metadata: CheckpointMetadata | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const [k, v] of Object.entries(metadata ?? {})) {
    if (typeof v === "string" || typeof v === "boolean" || (typeof v === "number" && Number.isFinite(v))) out[k] = v;
  }
  return out;
}
