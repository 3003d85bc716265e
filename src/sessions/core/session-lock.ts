// The per-session lock of a Forkpoint: moves alone, tool calls together, a handler's own calls never deadlocked.
import { reentrantCall, servedHandler } from "../../tools/handler-scope.js";

/** One key's readers-writer lock: exclusive holders run alone, in order; shared holders run together between them. */
class ReadersWriterLock {
  /** Resolves when the last queued exclusive holder is done. */
  tail: Promise<void> = Promise.resolve();
  readonly shared = new Set<Promise<unknown>>();
  holders = 0;
  /** Exclusive holders running or queued: while there are none, a shared holder starts at once. */
  exclusive = 0;
  /** Shared holders started from inside a running call's handler (not queued): an exclusive holder waits for them too. */
  readonly joined = new Set<Promise<unknown>>();
}

/**
 * A per-key readers-writer lock (keys are forgotten when idle). A key is a session id where tool handlers are
 * concerned: from inside a handler of that session, an exclusive request (or any request, inside a move's handler)
 * would wait for the handler that awaits it, so it is refused at once; a shared one inside a call's handler joins it.
 */
export function keyedLock(): <T>(key: string, fn: () => Promise<T>, mode?: "exclusive" | "shared", call?: string) => Promise<T> {
  const locks = new Map<string, ReadersWriterLock>();
  return async <T>(key: string, fn: () => Promise<T>, mode: "exclusive" | "shared" = "exclusive", call?: string): Promise<T> => {
    const handler = servedHandler(key);
    const joins = handler?.mode === "call" && mode === "shared";
    if (handler && !joins) throw reentrantCall(call ?? (mode === "shared" ? "a tool call" : "a move or deleteSession"), key, handler);
    let lock = locks.get(key);
    if (!lock) locks.set(key, (lock = new ReadersWriterLock()));
    lock.holders++;
    try {
      if (mode === "shared") {
        // Started at once when no exclusive holder runs or waits, so that calls start in the order they were made; a
        // call's handler's own call starts at once even then (a move queued meanwhile waits for the handler, which waits for it).
        const run = lock.exclusive === 0 || joins ? fn() : lock.tail.then(fn);
        const settled = run.catch(() => undefined);
        lock.shared.add(settled);
        if (joins) lock.joined.add(settled);
        try {
          return await run;
        } finally {
          lock.shared.delete(settled);
          lock.joined.delete(settled);
        }
      }
      // Wait for the exclusive holder before us and for the shared holders already started (not later ones:
      // they queue behind us).
      // Alone on this key (the usual case): nothing to wait for.
      const before = lock.holders === 1 ? null : [lock.tail, ...lock.shared];
      let release!: () => void;
      lock.tail = new Promise<void>((resolve) => (release = resolve));
      lock.exclusive++;
      try {
        if (before) await Promise.all(before);
        // Calls a handler of a call we waited for started without queueing (it may not have awaited them).
        while (lock.joined.size > 0) await Promise.all(lock.joined);
        return await fn();
      } finally {
        lock.exclusive--;
        release();
      }
    } finally {
      if (--lock.holders === 0) locks.delete(key);
    }
  };
}
