// Who journaled a call: a caller can watch the calls journaled inside what it runs (the LangGraph saver tells which
// run of a thread's graph made each call, `src/langgraph/run-calls.ts`). Told in the call's own write unit, before it
// commits: no reader can see the call before its watcher knows it (a unit that then fails told of an id never stored).
import { AsyncLocalStorage } from "node:async_hooks";

const watching = new AsyncLocalStorage<(entryId: string) => void>();

/** Runs `fn`, telling `onJournal` the id of each tool call journaled inside it (in its async context). */
export function watchJournal<T>(onJournal: (entryId: string) => void, fn: () => T): T {
  return watching.run(onJournal, fn);
}

/** Tells the caller's watcher, if any, of a call just journaled. */
export function noteJournaled(entryId: string): void {
  watching.getStore()?.(entryId);
}
