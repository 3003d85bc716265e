// A task's first interrupt of a step, kept when LangGraph replaces it with a later question the task asked there.
import { INTERRUPT, type CheckpointPendingWrite, type SerializerProtocol } from "@langchain/langgraph-checkpoint";
import type { LgWriteRow, Step, Tx } from "../store/port/index.js";

/**
 * The channel and index a task's first interrupt at a checkpoint is kept under, once the task asked again in the same
 * step (LangGraph writes each interrupt of a task at one index, so the later replaces the earlier). Never served as a
 * write of its own (`sortedWrites` leaves it out): a head whose resume values are not served (a move undid what came
 * after the wait) runs the task from its start, so it asks that first question again, and shows it (`asFirstAsked`).
 */
export const FIRST_ASKED = "__forkpoint_first_interrupt__";
export const FIRST_ASKED_IDX = -1003;

/**
 * Keeps the interrupt a task's new interrupt at the same checkpoint replaces (`rows`: one task's writes, about to be
 * stored), as its first (`FIRST_ASKED`), unless one is kept already or the new one is the same.
 */
export function* keepFirstAsked(tx: Tx, sessionId: string, rows: readonly Omit<LgWriteRow, "sessionId">[]): Step<void> {
  const asked = rows.find((r) => r.channel === INTERRUPT);
  if (!asked) return;
  const stored = (yield* tx.langgraph.writesOf(sessionId, asked.checkpointId)).filter((w) => w.taskId === asked.taskId);
  const before = stored.find((w) => w.channel === INTERRUPT);
  if (!before || stored.some((w) => w.channel === FIRST_ASKED) || (before.type === asked.type && before.value.equals(asked.value))) return;
  yield* tx.langgraph.insertWrites([{ ...before, channel: FIRST_ASKED, idx: FIRST_ASKED_IDX }], false);
}

/** The first interrupts kept at a checkpoint (`keepFirstAsked`), by task id. */
export function* firstAskedAt(tx: Tx, sessionId: string, checkpointId: string): Step<Map<string, LgWriteRow>> {
  const rows = (yield* tx.langgraph.writesOf(sessionId, checkpointId)).filter((w) => w.channel === FIRST_ASKED);
  return new Map(rows.map((w) => [w.taskId, w]));
}

/** Stored writes with each task's interrupt replaced by its first (`firsts`): as a head that runs the task anew shows. */
export function asFirstAsked(writes: LgWriteRow[], firsts: ReadonlyMap<string, LgWriteRow>): LgWriteRow[] {
  return writes.map((w) => {
    const first = w.channel === INTERRUPT ? firsts.get(w.taskId) : undefined;
    return first ? { ...w, type: first.type, value: first.value } : w;
  });
}

/** Pending writes with each task's interrupt replaced by its first (`firsts`), as `asFirstAsked`. */
export async function withFirstAsked(
  serde: SerializerProtocol,
  writes: CheckpointPendingWrite[],
  firsts: ReadonlyMap<string, LgWriteRow>,
): Promise<CheckpointPendingWrite[]> {
  if (firsts.size === 0) return writes;
  const out: CheckpointPendingWrite[] = [];
  for (const w of writes) {
    const first = w[1] === INTERRUPT ? firsts.get(w[0]) : undefined;
    out.push(first ? [w[0], INTERRUPT, await serde.loadsTyped(first.type, first.value)] : w);
  }
  return out;
}
