// A subgraph's put in a run whose parent graph's thread was moved meanwhile: the parent's put will be refused
// (SESSION_MOVED), so the subgraph's is refused first. Under durability "exit" a `checkpointer: true` subgraph puts when
// it ends, before its parent does: landed, the stopped run would live on in the subgraph's history (its next run loads it).
import type { RunnableConfig } from "@langchain/core/runnables";
import type { JsonValue } from "../models/json.js";
import {
  canonicalJson,
  entryAt,
  lastLineageMessage,
  lineageMessages,
  ownedCurrent,
  toMessage,
  type EngineContext,
} from "../sessions/langgraph-bridge.js";
import type { LgPointRow, Step, Tx } from "../store/port/index.js";
import { fromMessage } from "./messages.js";
import { refuseMovedParent, targetOf } from "./moved-parent.js";
import type { RunMark } from "./run-calls.js";
import { serializeItems, threadKey, type SaverParts } from "./saver-parts.js";

/** The run of the graph a subgraph's put belongs to: that graph's namespace, and its messages channel at the step. */
export interface ParentRun {
  ns: string;
  /** The parent run's messages, serialized as the put was called (null: none to compare, or refused by the serializer). */
  serialized: Promise<JsonValue[] | null>;
  /** The run the put belongs to (its subgraph's and its parent's): a move it started after leaves nothing behind. */
  run: RunMark | undefined;
}

/**
 * The parent run of a put to a subgraph namespace, read as put is called from the config LangGraph passes it (the
 * parent task's `__pregel_read` of the step's channels); null for a root put, or when the parent's messages cannot be read.
 */
export function parentRunOf(parts: SaverParts, config: RunnableConfig, ns: string): ParentRun | null {
  if (ns === "") return null;
  const read = (config.configurable as Record<string, unknown>).__pregel_read;
  if (typeof read !== "function") return null;
  let list: unknown;
  try {
    list = (read as (select: string, fresh?: boolean) => unknown)(parts.messages, false);
  } catch {
    return null;
  }
  if (!Array.isArray(list)) return null;
  return {
    ns: ns.split("|").slice(0, -1).join("|"),
    serialized: serializeItems(parts, list.slice()).catch(() => null),
    run: parts.runs.runOf(config),
  };
}

/**
 * Refuses (`SESSION_MOVED`, as the parent's own put will be) a subgraph's put whose parent run goes on from a LangGraph
 * checkpoint of the parent's thread that a move (by any server) has since left: the parent's thread was rolled back,
 * switched or edited while the run was in flight. The run's parent checkpoint is the one whose messages its own begin
 * with, the most of them (a head the session was moved to, or synthesized, counts when it has as many). Legitimate time
 * travel (a run from an older checkpoint nobody moved away from) goes on, as LangGraph's own savers have it. Returns the
 * check, for the put's write transaction to run again.
 */
export async function refuseStoppedParentRun(
  parts: SaverParts,
  ctx: EngineContext,
  userId: string,
  threadId: string,
  run: ParentRun,
): Promise<PutGuard | null> {
  const items = await run.serialized;
  if (items === null) return null;
  // The parent's puts made so far land first: the parent's latest step is then stored.
  await parts.landing.settled(threadKey(userId, threadId, run.ns));
  const texts = items.map((item) => canonicalJson(item));
  const guard: PutGuard = (tx) => parentRunUnit(tx, userId, threadId, run.ns, texts, run.run);
  await ctx.store.read(guard);
  return guard;
}

/** A check the put runs again in its write transaction: a move landing after the first look is seen there. */
export type PutGuard = (tx: Tx) => Step<void>;

function* parentRunUnit(tx: Tx, userId: string, threadId: string, ns: string, run: string[], mark: RunMark | undefined): Step<void> {
  const thread = yield* tx.langgraph.getThread(userId, threadId, ns);
  if (!thread) return;
  const { branch: current, head } = yield* ownedCurrent(tx, thread.sessionId, userId);
  const headIn =
    head.msgCount <= run.length &&
    (head.msgCount === 0 || textOf(rowMessage(yield* lastLineageMessage(tx, current.id))) === run[head.msgCount - 1]);
  // The stored checkpoints by message count, most first, down to the head's when the run goes on from it.
  const byCount = new Map<number, LgPointRow[]>();
  for (const p of yield* tx.langgraph.pointsOf(thread.sessionId)) {
    const branch = (yield* tx.getBranch(p.branchId))!;
    const count = (yield* entryAt(tx, branch, p.position))?.msgCount ?? 0;
    if (count <= run.length && !(headIn && count <= head.msgCount)) byCount.set(count, [...(byCount.get(count) ?? []), p]);
  }
  for (const count of [...byCount.keys()].sort((a, b) => b - a)) {
    const candidates: LgPointRow[] = [];
    for (const p of byCount.get(count)!) {
      if (count === 0 || textOf((yield* lineageMessages(tx, p.branchId, toMessage, p.position)).at(-1)) === run[count - 1])
        candidates.push(p);
    }
    if (candidates.length === 0) continue;
    // The run's parent is one of them: it goes on when any of them is a parent a put may still go on from.
    let refusal: unknown;
    for (const p of candidates) {
      try {
        yield* refuseMovedParent(tx, thread.sessionId, current, thread, targetOf((yield* tx.getCheckpoint(p.fpCheckpointId))!), true, mark);
        return;
      } catch (error) {
        refusal = error;
      }
    }
    throw refusal;
  }
}

const textOf = (message: Parameters<typeof fromMessage>[0] | undefined): string | undefined =>
  message === undefined ? undefined : canonicalJson(fromMessage(message));
const rowMessage = (row: Parameters<typeof toMessage>[0] | undefined) => (row === undefined ? undefined : toMessage(row));
