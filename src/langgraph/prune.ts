// ForkpointSaver's prune: LangGraph's `prune(threadIds, { strategy })` (as Python's savers have it) over a user's threads.
// "delete" deletes the threads (as `deleteThread`); "keep_latest" keeps, in each namespace, the latest checkpoint and
// what the thread, its branches, its pending interrupts and its DeltaChannels still read (`prune-plan.ts`).
import { ConflictError, ValidationError } from "../models/errors.js";
import type { LgCheckpointRow, Step, Tx } from "../store/port/index.js";
import { ownedSession, type EngineContext } from "../sessions/langgraph-bridge.js";
import { rowVersions } from "./channel-values.js";
import { deleteThreadSessions } from "./delete-thread.js";
import { carryOut, planKeepLatest, versionsKey, type KeptRows, type KeptWaits, type KnownVersions, type PrunePlan } from "./prune-plan.js";
import { assertSaverKey, userIn, type SaverParts } from "./saver-parts.js";

/** How `prune` treats the threads it is given. */
export type PruneStrategy = "keep_latest" | "delete";

/** Options of `ForkpointSaver.prune`. */
export interface PruneThreadsOptions {
  /** "keep_latest" (the default, as in LangGraph): old checkpoints go, the thread goes on. "delete": the threads go. */
  strategy?: PruneStrategy;
  /** The user whose threads they are (default: the saver's). */
  userId?: string;
}

const STRATEGIES: readonly string[] = ["keep_latest", "delete"];
const OPTIONS: readonly string[] = ["strategy", "userId"];
/** Units that met rows written since their versions were read; past this, the threads are too busy to prune now. */
const MAX_ATTEMPTS = 8;

/** Prunes the user's threads named (each with all its namespaces); unknown ids are passed over. */
export async function prune(parts: SaverParts, threadIds: readonly string[], options: PruneThreadsOptions | undefined): Promise<void> {
  // Every argument is checked before anything is read or written.
  if (!Array.isArray(threadIds)) throw new ValidationError("threadIds", "must be an array of thread ids");
  const ids = threadIds.map((id: unknown, i) => {
    if (typeof id === "number" && Number.isFinite(id)) return String(id);
    if (typeof id !== "string") throw new ValidationError(`threadIds[${i}]`, "must be a string");
    // As a put refuses them: no thread can have such an id, so a caller who gives one has a bug to hear about.
    if (id === "") throw new ValidationError(`threadIds[${i}]`, "must not be empty");
    assertSaverKey(id, `threadIds[${i}]`);
    return id;
  });
  if (options !== undefined && (options === null || typeof options !== "object" || Array.isArray(options))) {
    throw new ValidationError("options", "must be an object");
  }
  for (const key of Object.keys(options ?? {})) {
    if (!OPTIONS.includes(key)) throw new ValidationError(`options.${key}`, `is not an option of prune (${OPTIONS.join(", ")})`);
  }
  const strategy: unknown = options?.strategy ?? "keep_latest";
  if (typeof strategy !== "string" || !STRATEGIES.includes(strategy)) {
    throw new ValidationError("options.strategy", `must be "keep_latest" or "delete"`);
  }
  const userId = userIn(parts, options);
  if (ids.length === 0) return;
  const ctx = await parts.engine();
  const sessions = await ctx.store.read((tx) => threadSessionsUnit(tx, userId, ids));
  if (sessions.length === 0) return;
  if (strategy === "delete") return deleteThreadSessions(parts, ctx, userId, sessions);
  // This process's puts to these threads wait (and it waits for theirs); another process's are serialized by the store.
  const locked = (i: number): Promise<void> =>
    i < sessions.length
      ? ctx.withSessionLock(`langgraph-put:${sessions[i]}`, () => locked(i + 1))
      : keepLatest(parts, ctx, userId, sessions);
  await locked(0);
  // The mirrors may name checkpoints that are gone: the next read mirrors the thread again.
  for (const id of sessions) parts.cache.delete(id);
}

/**
 * One write unit for every namespace: it plans on what the sessions hold then and deletes. Channel versions need the
 * serializer (asynchronous), so they are read beforehand; a unit that meets a checkpoint written since writes nothing
 * and is run again once that one's versions are read too.
 */
async function keepLatest(parts: SaverParts, ctx: EngineContext, userId: string, sessions: string[]): Promise<void> {
  const known: KnownVersions = new Map();
  const learn = async (rows: LgCheckpointRow[]) => {
    for (const row of rows) known.set(versionsKey(row.sessionId, row.checkpointId), await rowVersions(parts, row));
  };
  await learn(await ctx.store.read((tx) => checkpointsUnit(tx, sessions)));
  for (let attempt = 1; ; attempt++) {
    const missing = await ctx.store.write({ sessionIds: sessions }, (tx) => keepLatestUnit(parts, ctx, tx, userId, sessions, known));
    if (missing.length === 0) return;
    if (attempt === MAX_ATTEMPTS) {
      throw new ConflictError(
        "the threads kept getting new checkpoints while they were being pruned; prune them again later",
        "THREAD_BUSY",
      );
    }
    await learn(missing);
  }
}

/** The sessions of every namespace of the threads, in id order (the order their locks are taken in). */
function* threadSessionsUnit(tx: Tx, userId: string, threadIds: string[]): Step<string[]> {
  const found = new Set<string>();
  for (const id of new Set(threadIds)) for (const s of yield* tx.langgraph.threadSessions(userId, id)) found.add(s);
  return [...found].sort();
}

function* checkpointsUnit(tx: Tx, sessions: string[]): Step<LgCheckpointRow[]> {
  const rows: LgCheckpointRow[] = [];
  for (const id of sessions) rows.push(...(yield* tx.langgraph.checkpointsOf(id)));
  return rows;
}

function* keepLatestUnit(parts: SaverParts, ctx: EngineContext, tx: Tx, userId: string, sessions: string[], known: KnownVersions) {
  const plans: PrunePlan[] = [];
  const missing: LgCheckpointRow[] = [];
  const waits: KeptWaits = new Map();
  const kept: KeptRows = new Map();
  // A namespace's parent is planned before it: what the parent keeps is what its subgraphs keep where they waited for.
  const depth = new Map<string, number>();
  for (const id of sessions) {
    const ns = (yield* tx.langgraph.threadOfSession(id))?.checkpointNs ?? "";
    depth.set(id, ns === "" ? 0 : ns.split("|").length);
  }
  for (const id of [...sessions].sort((a, b) => depth.get(a)! - depth.get(b)!)) {
    // Deleted meanwhile (another saver's deleteThread): nothing left to prune there.
    if (!(yield* tx.getSession(id))) continue;
    yield* ownedSession(tx, id, userId);
    // A move still running (in another process, or left by a crash) forks from a checkpoint it may need.
    if ((yield* tx.runningMoves(id)).length > 0 || (yield* tx.getWorkspace(id))?.restoring) {
      throw new ConflictError(`session ${id} has a move in progress; let it finish (or run fp.recover()) first`, "MOVE_IN_PROGRESS");
    }
    const planned = yield* planKeepLatest(parts, ctx, tx, id, known, waits, kept);
    if ("missing" in planned) missing.push(...planned.missing);
    else plans.push(planned.plan);
  }
  // Planned in full before anything is deleted: a unit that must run again has written nothing.
  if (missing.length > 0) return missing;
  for (const plan of plans) yield* carryOut(tx, plan);
  return [];
}
