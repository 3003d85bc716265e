// A handle's writes waiting for a session's move, in the order they were made: its later writes on that session go
// after them, as calls made without awaiting commit in the order made (its moves and tool calls: see call-order.ts).

/** The writes one handle has waiting on one session, until the last settles. */
export interface WriteQueue {
  tail: Promise<unknown>;
  /** Why a write of the queue was refused waiting: those queued behind it are refused too (no later one lands first). */
  refusal?: unknown;
}

const queues = new WeakMap<object, Map<string, WriteQueue>>();

/** What `owner` (a handle's event emitter: one per handle) has waiting on `sessionId`, settled once all of it has. */
export function queuedWrites(owner: object, sessionId: string): Promise<unknown> | undefined {
  return queues.get(owner)?.get(sessionId)?.tail;
}

/** Runs `run` once every write queued on `sessionId` before it has settled; it is queued itself until it settles. */
export function enqueueWrite<T>(owner: object, sessionId: string, run: (queue: WriteQueue) => Promise<T>): Promise<T> {
  let byId = queues.get(owner);
  if (!byId) queues.set(owner, (byId = new Map()));
  const map = byId;
  let queue = map.get(sessionId);
  if (!queue) map.set(sessionId, (queue = { tail: Promise.resolve() }));
  const q = queue;
  const result = q.tail.then(() => run(q));
  const tail = result.then(
    () => undefined,
    () => undefined,
  );
  q.tail = tail;
  void tail.then(() => {
    if (map.get(sessionId) === q && q.tail === tail) map.delete(sessionId);
  });
  return result;
}
