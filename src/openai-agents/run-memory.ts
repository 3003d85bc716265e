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

/** Run contexts to the ids of the calls their run's wrapped tools made (journaled, or refused as they were). */
const runCalls = new WeakMap<object, Set<string>>();

/** Records that the run of `runContext` made call `callId` through `undoableAgentTools`. */
export function madeCall(runContext: unknown, callId: string): void {
  if (typeof runContext !== "object" || runContext === null) return;
  let calls = runCalls.get(runContext);
  if (!calls) runCalls.set(runContext, (calls = new Set()));
  calls.add(callId);
}

/**
 * The ids of the function calls among `written` (a write's items), and of those the run of `runContext` made: a run
 * a move stopped saves its input without its calls' items, and still goes where its calls are, not where the session
 * moved to.
 */
export function runCallIds(runContext: unknown, written: readonly string[]): string[] {
  const made = typeof runContext === "object" && runContext !== null ? runCalls.get(runContext) : undefined;
  return made ? [...new Set([...written, ...made])] : [...written];
}

/** Run contexts to the ids of the calls a write of their run named as caused by its first item. */
const namedCalls = new WeakMap<object, Set<string>>();

/**
 * The calls the run of `runContext` made that no write of it named yet as caused: a stopped streamed run saves its
 * input alone, without its calls' items, and that input still caused them.
 */
export function callsToName(runContext: unknown): string[] {
  if (typeof runContext !== "object" || runContext === null) return [];
  const named = namedCalls.get(runContext);
  return [...madeCalls(runContext)].filter((callId) => !named?.has(callId));
}

/** Records that a write of the run of `runContext` named `callIds` as caused (a later write names them no more). */
export function namedCaused(runContext: unknown, callIds: readonly string[]): void {
  if (typeof runContext !== "object" || runContext === null || callIds.length === 0) return;
  let named = namedCalls.get(runContext);
  if (!named) namedCalls.set(runContext, (named = new Set()));
  for (const callId of callIds) named.add(callId);
}

/** The ids of the calls the run of `runContext` made through `undoableAgentTools` (empty: none, or no run). */
export function madeCalls(runContext: unknown): ReadonlySet<string> {
  return (typeof runContext === "object" && runContext !== null ? runCalls.get(runContext) : undefined) ?? new Set();
}
