// A subgraph namespace's checkpoints ordered among its root's: an import writes each namespace's session on its own.
import type { Step, Tx } from "../store/port/index.js";

/**
 * A subgraph namespace's forkpoint checkpoint seqs as its thread's root session orders them, for comparing with the
 * root's (only the root's session is moved: its forks bound what a subgraph's step keeps). Undefined when the
 * namespace's session was written beside the root's, as a run writes them: seq orders them on every store (servers'
 * clocks may differ). An import writes each namespace's session on its own (each is a document of its own), in either
 * order: imported before the root's, all its seqs fall below the root's start; imported after it, its start's seq lies
 * above root checkpoints written after it began (by `createdAt`, which an import keeps; a run gives those higher
 * seqs). Each of its seqs then maps between the seq of the root's newest checkpoint written at or before it and the
 * next (the root's seqs are whole numbers). Not for ordering the namespace's own checkpoints among themselves: several
 * map to one value.
 */
export function* rootOrder(tx: Tx, sessionId: string): Step<((seq: number) => number) | undefined> {
  const thread = yield* tx.langgraph.threadOfSession(sessionId);
  if (!thread || thread.checkpointNs === "") return undefined;
  const root = yield* tx.langgraph.getThread(thread.userId, thread.threadId, "");
  if (!root) return undefined;
  const own = yield* tx.getCheckpoint(thread.startCheckpointId);
  const rootStart = yield* tx.getCheckpoint(root.startCheckpointId);
  if (!own || !rootStart) return undefined;
  const rootRows = yield* tx.sessionCheckpoints(root.userId, root.sessionId);
  const importedBefore = own.seq < rootStart.seq;
  const importedAfter = !importedBefore && rootRows.some((r) => r.seq < own.seq && r.createdAt > own.createdAt);
  if (!importedBefore && !importedAfter) return undefined;
  const mapped = new Map<number, number>();
  for (const row of yield* tx.sessionCheckpoints(thread.userId, sessionId)) {
    const before = rootRows.filter((r) => r.createdAt <= row.createdAt).reduce((a, r) => Math.max(a, r.seq), 0);
    mapped.set(row.seq, before + 0.5);
  }
  return (seq) => mapped.get(seq) ?? seq;
}
