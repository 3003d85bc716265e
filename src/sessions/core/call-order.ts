// A handle's writes and calls on one session, made without awaiting, keep the order they were made in: a tool call or
// move made while earlier writes still land (one may wait for a move of the session) starts once they have landed,
// and a write made while such a call waits to start lands once it has started (taken the session's lock).

/** The writes made since the last call that had to wait: settled once `count` is back to 0. */
interface Generation {
  count: number;
  idle?: { promise: Promise<void>; resolve: () => void };
}

interface Order {
  writes: Generation;
  /** Settles once the newest call made to wait has started: writes and calls made after it wait for that. */
  starting?: Promise<void>;
}

const orders = new WeakMap<object, Map<string, Order>>();

const idleOf = (gen: Generation): Promise<void> => {
  if (!gen.idle) {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    gen.idle = { promise, resolve };
  }
  return gen.idle.promise;
};

/** Forgets the session's order once nothing of it is landing or waiting: a handle writing in turn keeps no entry. */
function forget(byId: Map<string, Order>, sessionId: string, order: Order): void {
  if (order.writes.count === 0 && order.starting === undefined && byId.get(sessionId) === order) byId.delete(sessionId);
}

/**
 * Runs the write `run` of `owner` (a handle's event emitter: one per handle) on `sessionId` after the calls made before
 * it that wait to start, counting it as landing until it settles. With none waiting (the usual case) it runs at once.
 */
export function orderedWrite<T>(owner: object, sessionId: string, run: () => Promise<T>): Promise<T> {
  let byId = orders.get(owner);
  if (!byId) orders.set(owner, (byId = new Map()));
  let order = byId.get(sessionId);
  if (!order) byId.set(sessionId, (order = { writes: { count: 0 } }));
  const gen = order.writes;
  gen.count++;
  let written: Promise<T>;
  try {
    written = order.starting ? order.starting.then(run) : run();
  } catch (error) {
    written = Promise.reject(error);
  }
  const map = byId;
  const o = order;
  const done = (): void => {
    if (--gen.count > 0) return;
    gen.idle?.resolve();
    forget(map, sessionId, o);
  };
  written.then(done, done);
  return written;
}

/**
 * Runs the call `take` (which takes the session's lock and calls `entered` once it holds it) of `owner` on `sessionId`
 * after the writes made before it have landed and the calls made before it have started. With neither (the usual
 * case) it runs at once.
 */
export function orderedCall<T>(owner: object, sessionId: string, take: (entered: () => void) => Promise<T>): Promise<T> {
  const byId = orders.get(owner);
  const order = byId?.get(sessionId);
  if (!byId || !order || (order.writes.count === 0 && order.starting === undefined)) return take(() => undefined);
  const before: Promise<void>[] = [];
  if (order.writes.count > 0) before.push(idleOf(order.writes));
  if (order.starting) before.push(order.starting);
  let entered!: () => void;
  const started = new Promise<void>((resolve) => (entered = resolve));
  order.starting = started;
  order.writes = { count: 0 };
  const taken = Promise.all(before).then(() => take(entered));
  // Refused before it took the lock: what waits for its start goes on.
  taken.then(entered, entered);
  void started.then(() => {
    if (order.starting === started) order.starting = undefined;
    forget(byId, sessionId, order);
  });
  return taken;
}
