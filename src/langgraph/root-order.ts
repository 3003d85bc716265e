// A subgraph namespace's checkpoints ordered among its root's: an import can write the subgraph's session first.
import type { Step, Tx } from "../store/port/index.js";

/**
 * A subgraph namespace's forkpoint checkpoint seqs as its thread's root session orders them, for comparing with the
 * root's (only the root's session is moved: its forks bound what a subgraph's step keeps). Undefined when the
 * namespace's session was written after the root's began, as a run writes them: seq orders them on every store
 * (servers' clocks may differ). When it was imported before the root's (each namespace is a document of its own), all
 * its seqs fall below the root's: each then maps between the seq of the root's newest checkpoint written at or before
 * it (by `createdAt`, which an import keeps) and the next (the root's seqs are whole numbers). Not for ordering the
 * namespace's own checkpoints among themselves: several map to one value.
 */
export function* rootOrder(tx: Tx, sessionId: string): Step<((seq: number) => number) | undefined> {
  const thread = yield* tx.langgraph.threadOfSession(sessionId);
  if (!thread || thread.checkpointNs === "") return undefined;
  const root = yield* tx.langgraph.getThread(thread.userId, thread.threadId, "");
  if (!root) return undefined;
  const own = yield* tx.getCheckpoint(thread.startCheckpointId);
  const rootStart = yield* tx.getCheckpoint(root.startCheckpointId);
  if (!own || !rootStart || own.seq > rootStart.seq) return undefined;
  const rootRows = yield* tx.sessionCheckpoints(root.userId, root.sessionId);
  const mapped = new Map<number, number>();
  for (const row of yield* tx.sessionCheckpoints(thread.userId, sessionId)) {
    const before = rootRows.filter((r) => r.createdAt <= row.createdAt).reduce((a, r) => Math.max(a, r.seq), 0);
    mapped.set(row.seq, before + 0.5);
  }
  return (seq) => mapped.get(seq) ?? seq;
}
