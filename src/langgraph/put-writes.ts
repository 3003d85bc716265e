// ForkpointSaver's putWrites: a task's pending writes, stored by the id of the checkpoint they belong to.
import type { RunnableConfig } from "@langchain/core/runnables";
import { type PendingWrite } from "@langchain/langgraph-checkpoint";
import { isSpecialChannel, specialIndex } from "./special-channels.js";
import { ValidationError } from "../models/errors.js";
import { newId } from "../models/ids.js";
import { assertPlainText } from "../models/strings.js";
import type { LgWriteRow, Tx, WriteScope } from "../store/port/index.js";
import { assertSaverKey, threadConfig, threadKey, userOf, type SaverParts } from "./saver-parts.js";
import { stoppedRunPut } from "./put-checkpoint.js";
import { findThread, startThread, startedElsewhere } from "./threads.js";
import type { EngineContext } from "../sessions/langgraph-bridge.js";
import { keepFirstAsked } from "./first-asked.js";
import { markResumedOn } from "./resumed-on.js";
import { keepResumedAside } from "./resumed-aside.js";
import { markWrittenOn } from "./written-on.js";

/** Units locking the one session they expect the thread in, before one that locks everything (a thread in churn). */
const SCOPED_ATTEMPTS = 3;

/** Stores `writes` of task `taskId` at the config's checkpoint, in the thread's session (started when there is none). */
export async function putWrites(
  parts: SaverParts,
  config: RunnableConfig,
  writes: PendingWrite[],
  taskId: string,
  taskPath: string,
): Promise<void> {
  const { threadId, ns = "", checkpointId } = threadConfig(config ?? {});
  if (threadId === undefined || threadId === "") throw new ValidationError("config.configurable.thread_id", "is missing");
  if (checkpointId === undefined) throw new ValidationError("config.configurable.checkpoint_id", "is missing");
  if (typeof taskId !== "string") throw new ValidationError("taskId", "must be a string");
  if (typeof taskPath !== "string") throw new ValidationError("taskPath", "must be a string");
  const userId = userOf(parts, config);
  assertSaverKey(threadId, "config.configurable.thread_id");
  assertSaverKey(ns, "config.configurable.checkpoint_ns");
  assertSaverKey(checkpointId, "config.configurable.checkpoint_id");
  assertSaverKey(taskId, "taskId");
  assertPlainText(taskPath, "taskPath");
  if (!Array.isArray(writes) || !writes.every((w) => Array.isArray(w) && typeof w[0] === "string")) {
    throw new ValidationError("writes", "must be an array of [channel, value] pairs");
  }
  // A stopped run's writes are refused, but for the failure it ends with (`run-calls.ts`), alone: the resume values
  // it was given are not the thread's (a refused run's answer would otherwise answer the task's next question).
  const failure = writes.filter(([channel]) => channel === "__error__");
  parts.runs.failedAfterForkRefusal(config, failure.length > 0);
  if (parts.runs.stoppedWrites(config, taskId)) {
    if (failure.length === 0) throw stoppedRunPut(threadId);
    writes = failure;
  }
  // Tracked from here, as a put is (`landing-puts.ts`): LangGraph issues the next put once these writes have landed.
  const key = threadKey(userId, threadId, ns);
  const landed = Promise.withResolvers<void>();
  parts.landing.add(key, landed.promise, parts.sessions.peek(key));
  try {
    await storeWrites(parts, userId, threadId, ns, checkpointId, writes, taskId, taskPath);
    // A run's results, waits and failures there (not the resume values its Command gave: a run beside it given them
    // has not gone on from them).
    if (writes.some(([channel]) => channel !== "__resume__")) parts.runs.made(parts.runs.runOf(config), checkpointId, taskId);
  } finally {
    landed.resolve();
  }
}

async function storeWrites(
  parts: SaverParts,
  userId: string,
  threadId: string,
  ns: string,
  checkpointId: string,
  writes: PendingWrite[],
  taskId: string,
  taskPath: string,
): Promise<void> {
  const rows: Omit<LgWriteRow, "sessionId">[] = [];
  for (const [i, [channel, value]] of writes.entries()) {
    assertSaverKey(channel, `writes[${i}][0]`);
    const [type, body] = await parts.serde.dumpsTyped(value);
    rows.push({ checkpointId, taskId, idx: specialIndex(channel) ?? i, channel, type, value: Buffer.from(body), taskPath });
  }
  // Special writes (errors, interrupts) replace an earlier one of the task; regular ones are written once.
  const special = writes.every(([channel]) => isSpecialChannel(channel));
  const ctx = await parts.engine();
  // LangGraph sends a step's writes without waiting for the put of their checkpoint (puts are queued one after
  // another): writes may come first, so they are keyed by the checkpoint's id, not tied to a stored row.
  // One unit: a deleteThread in between would leave the writes behind a thread that no longer exists. It locks the
  // session it writes: the thread's as the saver knows it (else as looked up), or the new one that starts the thread.
  // Should the thread be another session by then (deleted, or started by another writer), the unit writes nothing and
  // runs again locking that one; so does a unit whose start of the thread lost to another writer's (`startedElsewhere`).
  let expected = parts.sessions.peek(threadKey(userId, threadId, ns)) ?? (await findThread(ctx, userId, threadId, ns))?.sessionId;
  for (let attempt = 1; ; attempt++) {
    const sessionId = expected ?? newId("ses");
    const scoped = attempt <= SCOPED_ATTEMPTS;
    const scope: WriteScope = scoped ? { sessionId } : { global: true };
    let elsewhere: { sessionId: string | undefined } | undefined;
    try {
      elsewhere = await ctx.store.write(scope, (tx) =>
        putWritesUnit(tx, userId, threadId, ns, scoped, expected, ctx, sessionId, rows, special),
      );
    } catch (error) {
      if (!scoped || !startedElsewhere(error)) throw error;
      elsewhere = { sessionId: (await findThread(ctx, userId, threadId, ns))?.sessionId };
    }
    if (!elsewhere) {
      // A task's wait or failure, stored: runs served it tell the task's later calls from its earlier (`run-calls.ts`).
      parts.runs.settled(taskId, writes);
      return;
    }
    expected = elsewhere.sessionId;
  }
}

function* putWritesUnit(
  tx: Tx,
  userId: string,
  threadId: string,
  ns: string,
  scoped: boolean,
  expected: string | undefined,
  ctx: EngineContext,
  sessionId: string,
  rows: Omit<LgWriteRow, "sessionId">[],
  special: boolean,
) {
  const found = yield* tx.langgraph.getThread(userId, threadId, ns);
  if (scoped && found?.sessionId !== expected) return { sessionId: found?.sessionId };
  const thread = found ?? (yield* startThread(ctx, tx, userId, threadId, ns, expected === undefined ? sessionId : newId("ses")));
  // A task asking again in the same step: the question it replaces is kept, as the one a move back before it shows.
  if (special) yield* keepFirstAsked(tx, thread.sessionId, rows);
  // Results: marked with the branch they are stored on; a task run again after a move back replaces the undone run's.
  const rerun = !special && (yield* markWrittenOn(tx, thread, rows));
  // Resume values a run on another branch gave are kept aside before these write over them (`resumed-aside.ts`).
  if (special || rerun) yield* keepResumedAside(tx, thread, rows);
  // Resume values: marked with the branch they are stored on, as a head moved back to their checkpoint weighs them.
  yield* markResumedOn(tx, thread, rows, special || rerun);
  yield* tx.langgraph.insertWrites(
    rows.map((r) => ({ sessionId: thread.sessionId, ...r })),
    special || rerun,
  );
  return undefined;
}
