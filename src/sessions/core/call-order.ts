// A handle's writes and calls on one session, made without awaiting, keep the order they were made in: a tool call
// made while earlier writes still land (one may wait for a move of the session) starts once they have landed, and a
// write made while such a call waits lands once it has started (taken the session's lock); a move (or any exclusive
// call) goes after the writes made before it, and what is made after it waits until it has ended. A write refused
// waiting for another's move refuses what was made after it while it waited: nothing lands after it.
import { AsyncLocalStorage } from "node:async_hooks";
import { ConflictError, errorText } from "../../models/errors.js";

/** The writes made since the last call that had to wait: settled once `count` is back to 0. */
interface Generation {
  count: number;
  idle?: { promise: Promise<void>; resolve: () => void };
  /** Why one of them was refused waiting for a move: what was made after it is refused too. */
  refusal?: unknown;
}

interface Order {
  writes: Generation;
  /** Settles once the newest ordered call has started (a move: ended), with the refusal it passes on, if any. */
  starting?: Promise<unknown>;
}

const orders = new WeakMap<object, Map<string, Order>>();

/** The compound calls (see `orderedCompound`) the current async context runs inside: their own parts are not ordered again. */
const inside = new AsyncLocalStorage<ReadonlyArray<{ owner: object; sessionId: string }>>();
const isInside = (owner: object, sessionId: string): boolean =>
  inside.getStore()?.some((c) => c.owner === owner && c.sessionId === sessionId) ?? false;
/** Refusals that refuse what was made after them (a write's wait for a move ran out, or could not finish it). */
const cascading = new WeakSet<object>();

/** Marks `refusal` (of a write waiting for a move) as one that refuses the handle's calls made after that write. */
export function cascades(refusal: unknown): void {
  if (typeof refusal === "object" && refusal !== null) cascading.add(refusal);
}

const isCascading = (error: unknown): boolean => typeof error === "object" && error !== null && cascading.has(error);

/** The refusal of a call made after a write that was refused waiting: it would otherwise land after that one. */
export function behind(refusal: unknown): ConflictError {
  // Named by the first refusal of the chain, not by the calls refused for it in between.
  const first = firstOf.get(refusal as object) ?? refusal;
  const code = first instanceof ConflictError ? first.code : "MOVE_IN_PROGRESS";
  const error = new ConflictError(`an earlier write of this session, made before this call, was refused: ${errorText(first)}`, code);
  cascading.add(error);
  firstOf.set(error, first);
  return error;
}

const firstOf = new WeakMap<object, unknown>();

const idleOf = (gen: Generation): Promise<void> => {
  if (!gen.idle) {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    gen.idle = { promise, resolve };
  }
  return gen.idle.promise;
};

function orderOf(owner: object, sessionId: string): { byId: Map<string, Order>; order: Order } {
  let byId = orders.get(owner);
  if (!byId) orders.set(owner, (byId = new Map()));
  let order = byId.get(sessionId);
  if (!order) byId.set(sessionId, (order = { writes: { count: 0 } }));
  return { byId, order };
}

/** Forgets the session's order once nothing of it is landing or waiting: a handle writing in turn keeps no entry. */
function forget(byId: Map<string, Order>, sessionId: string, order: Order): void {
  if (order.writes.count === 0 && order.starting === undefined && byId.get(sessionId) === order) byId.delete(sessionId);
}

/**
 * Runs the write `run` of `owner` (a handle's event emitter: one per handle) on `sessionId` after the calls made before
 * it that have not started, counting it as landing until it settles. With none (the usual case) it runs at once.
 */
export function orderedWrite<T>(owner: object, sessionId: string, run: () => Promise<T>): Promise<T> {
  if (isInside(owner, sessionId)) return run();
  const { byId, order } = orderOf(owner, sessionId);
  const gen = order.writes;
  gen.count++;
  let written: Promise<T>;
  try {
    written = order.starting ? order.starting.then((refusal) => (refusal === undefined ? run() : Promise.reject(behind(refusal)))) : run();
  } catch (error) {
    written = Promise.reject(error);
  }
  const done = (error?: unknown): void => {
    if (isCascading(error)) gen.refusal ??= error;
    if (--gen.count > 0) return;
    gen.idle?.resolve();
    forget(byId, sessionId, order);
  };
  written.then(() => done(), done);
  return written;
}

/**
 * Runs the call `take` of `owner` on `sessionId` (it takes the session's lock and calls `entered` once it holds it)
 * after the writes made before it have landed and the calls made before it have started; `exclusive` (a move): what is
 * made after it waits until it has ended. A shared call with nothing before it (the usual case) runs at once.
 */
export function orderedCall<T>(
  owner: object,
  sessionId: string,
  exclusive: boolean,
  take: (entered: () => void) => Promise<T>,
): Promise<T> {
  if (isInside(owner, sessionId)) return take(() => undefined);
  const existing = orders.get(owner)?.get(sessionId);
  if (!exclusive && (!existing || (existing.writes.count === 0 && existing.starting === undefined))) return take(() => undefined);
  const { byId, order } = orderOf(owner, sessionId);
  const earlier = order.writes;
  const before = order.starting;
  let start!: (refusal: unknown) => void;
  const started = new Promise<unknown>((resolve) => (start = resolve));
  order.starting = started;
  order.writes = { count: 0 };
  const waited: Promise<unknown> =
    earlier.count > 0
      ? before
        ? Promise.all([idleOf(earlier), before]).then(([, r]) => r)
        : idleOf(earlier)
      : (before ?? Promise.resolve());
  const taken = waited.then((passed) => {
    const refusal = earlier.refusal ?? passed;
    if (refusal !== undefined) throw behind(refusal);
    return take(exclusive ? () => undefined : () => start(undefined));
  });
  // Refused before it took the lock (or a move, once ended): what waits for it goes on, or is refused with it.
  taken.then(
    () => start(undefined),
    (error: unknown) => start(isCascading(error) ? error : undefined),
  );
  void started.then(() => {
    if (order.starting === started) order.starting = undefined;
    forget(byId, sessionId, order);
  });
  return taken;
}

/**
 * Runs `run`, a call made of several (an adapter's save: a read, then a fork or writes), as one exclusive call of the
 * handle's order: what was made before it goes first, what is made after it waits until it has ended, and its own
 * writes and moves are not ordered again (they would wait for it).
 */
export function orderedCompound<T>(owner: object, sessionId: string, run: () => Promise<T>): Promise<T> {
  if (isInside(owner, sessionId)) return run();
  const outer = inside.getStore() ?? [];
  return orderedCall(owner, sessionId, true, () => inside.run([...outer, { owner, sessionId }], run));
}
