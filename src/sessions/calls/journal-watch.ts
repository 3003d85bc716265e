// Who journaled a call: a caller can watch the calls journaled inside what it runs (the LangGraph saver tells which
// run of a thread's graph made each call, `src/langgraph/run-calls.ts`). The watcher runs in the call's own write unit,
// before it commits: no reader sees the call before its watcher knows it, and a watcher that throws refuses the call
// (nothing is written, its tool never runs). A unit that fails later told of an id never stored.
import { AsyncLocalStorage } from "node:async_hooks";
import type { EntryRow, Step, Tx } from "../../store/port/index.js";

/** A watcher of the calls journaled: a module-level unit body run in the call's write unit, and what it is given. */
export interface JournalWatcher<C> {
  unit: (tx: Tx, entry: EntryRow, context: C) => Step<void>;
  context: C;
}

const watching = new AsyncLocalStorage<JournalWatcher<unknown>>();

/** Runs `fn`, with `watcher` told of each tool call journaled inside it (in its async context). */
export function watchJournal<C, T>(watcher: JournalWatcher<C>, fn: () => T): T {
  return watching.run(watcher as JournalWatcher<unknown>, fn);
}

/** The caller's watcher, told of a call just journaled (in the unit that journals it). */
export function* noteJournaled(tx: Tx, entry: EntryRow): Step<void> {
  const watcher = watching.getStore();
  if (watcher) yield* watcher.unit(tx, entry, watcher.context);
}
