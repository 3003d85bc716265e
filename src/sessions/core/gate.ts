// Calls made while recovery at open runs: they start at once (so they take their inputs as made) and reach the
// database, and the session locks, only once recovery has finished.
import type { Body, Store, WriteScope } from "../../store/port/index.js";
import type { EngineContext } from "./context.js";

/** What a call waits for before its first unit of work or lock; null once there is nothing to wait for. */
export type Gate = () => Promise<void> | null;

/** `store` whose units wait for `gate` first (a synchronous store's `readNow` is not gated: only open uses it). */
function gatedStore(store: Store, gate: Gate): Store {
  const after = <T>(run: () => Promise<T>): Promise<T> => {
    const waiting = gate();
    return waiting ? waiting.then(run) : run();
  };
  return {
    get capabilities() {
      return store.capabilities;
    },
    get closed() {
      return store.closed;
    },
    get inUnit() {
      return store.inUnit;
    },
    write: <T>(scope: WriteScope, body: Body<T>) => after(() => store.write(scope, body)),
    read: <T>(body: Body<T>) => after(() => store.read(body)),
    query: <T>(body: Body<T>) => after(() => store.query(body)),
    close: () => store.close(),
    vacuum: () => after(() => store.vacuum()),
    databaseFiles: () => store.databaseFiles(),
    sizeBytes: () => after(() => store.sizeBytes()),
    dump: () => after(() => store.dump()),
  };
}

/** `ctx` for the public API: its store units and session locks wait for `gate`; recovery keeps the ungated one. */
export function gatedContext(ctx: EngineContext, gate: Gate): EngineContext {
  return {
    ...ctx,
    store: gatedStore(ctx.store, gate),
    withSessionLock: (sessionId, fn, mode, call) => {
      const waiting = gate();
      return waiting ? waiting.then(() => ctx.withSessionLock(sessionId, fn, mode, call)) : ctx.withSessionLock(sessionId, fn, mode, call);
    },
  };
}
