// Which ForkpointSession a run reads and writes through, by its run context: its tools' calls go on from the branch
// that memory is on, so a pop or clear by another memory of the session moves the run no more than a rollback would.

/** A memory as its runs see it: its session, and the branch it read or moved to last (null: not known yet). */
export interface RunMemory {
  readonly sessionId: string;
  branch(): string | null;
}

/** Run contexts (the Runner passes the same one to its session and to its tools) to the memory of their run. */
const memories = new WeakMap<object, RunMemory>();

/** Records that the run of `runContext` uses `memory` (the Runner passes it to each history operation of a run). */
export function useMemory(runContext: unknown, memory: RunMemory): void {
  if (typeof runContext === "object" && runContext !== null) memories.set(runContext, memory);
}

/**
 * The branch the memory of the run of `runContext` is on, when the run has one on session `sessionId` that read or
 * moved it: undefined for a run without one (run without a ForkpointSession, a tool invoked by hand).
 */
export function memoryBranch(runContext: unknown, sessionId: string): string | undefined {
  if (typeof runContext !== "object" || runContext === null) return undefined;
  const memory = memories.get(runContext);
  if (!memory || memory.sessionId !== sessionId) return undefined;
  return memory.branch() ?? undefined;
}
