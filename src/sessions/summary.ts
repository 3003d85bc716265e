// `s.summary()`: a session at a glance (a list row, a status line, the CLI), read in one transaction with index
// lookups and counts (the checkpoint analytics one grouped count), except the tool counts, which walk the current
// lineage's tool calls and the session's applied set (the world).
import type { SessionSummary } from "../models/types.js";
import type { Tx } from "../store/port/index.js";
import type { EngineContext, SessionRef } from "./core/context.js";
import { ownedCurrent } from "./core/owned.js";
import { toCheckpoint, toMessage, toSessionInfo } from "./core/rows.js";
import { lastLineageMessage, lineageTools } from "./log/lineage.js";

export async function summary(ctx: EngineContext, ref: SessionRef): Promise<SessionSummary> {
  return ctx.store.read((tx) => summaryUnit(tx, ctx, ref));
}

function* summaryUnit(tx: Tx, ctx: EngineContext, ref: SessionRef) {
  const { branch, head } = yield* ownedCurrent(tx, ref.id, ref.userId);
  const lastMessage = yield* lastLineageMessage(tx, branch.id);
  const now = ctx.now();
  const [latest] = yield* tx.listCheckpoints({ userId: ref.userId, sessionId: ref.id, now, limit: 1 });
  let first = Infinity,
    last = -Infinity;
  const named: [string, number][] = [];
  for (const row of yield* tx.checkpointStats(ref.userId, ref.id, now)) {
    if (row.name !== null) named.push([row.name, row.count]);
    first = Math.min(first, row.firstAt);
    last = Math.max(last, row.lastAt);
  }
  const any = first !== Infinity;
  // The span is that of the two Dates (whole milliseconds), so that the three fields agree.
  const firstAt = any ? new Date(first) : null;
  const lastAt = any ? new Date(last) : null;
  // fromEntries defines own properties: a checkpoint named "__proto__" is counted like any other name.
  const checkpointsByName = Object.fromEntries(named);
  const toolCalls = { total: 0, running: 0, succeeded: 0, failed: 0, applied: 0 };
  for (const tool of yield* lineageTools(tx, branch.id)) {
    toolCalls.total++;
    toolCalls[tool.status ?? "running"]++;
  }
  // The world's applied set, not the lineage's applied calls: a call landed off the current lineage (`invoke` with
  // `after`, once the session moved on) is applied all the same, and a rollback undoes it.
  toolCalls.applied = (yield* tx.appliedCalls(ref.id)).length;
  return {
    ...toSessionInfo((yield* tx.getSessionInfo(ref.id))!),
    branches: yield* tx.countBranches(ref.id),
    messages: head.msgCount,
    position: head.position,
    lastMessage: lastMessage ? toMessage(lastMessage) : null,
    checkpoints: yield* tx.countCheckpoints(ref.userId, ref.id, now),
    latestCheckpoint: latest ? toCheckpoint(latest) : null,
    checkpointsByName,
    firstCheckpointAt: firstAt,
    lastCheckpointAt: lastAt,
    checkpointSpanMs: firstAt && lastAt ? lastAt.getTime() - firstAt.getTime() : null,
    toolCalls,
  };
}
