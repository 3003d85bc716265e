// A handle's writes waiting for a session's move, in the order they were made: its later calls on that session
// (writes, moves, tool calls) go after them, as calls made without awaiting commit in the order made.
const queues = new WeakMap<object, Map<string, Promise<unknown>>>();

/** What `owner` (a handle's event emitter: one per handle) still has waiting on `sessionId`, settled once every write queued so far has. */
export function queuedWrites(owner: object, sessionId: string): Promise<unknown> | undefined {
  return queues.get(owner)?.get(sessionId);
}

/** Runs `run` once every write queued on `sessionId` before it has settled; it is queued itself until it settles. */
export function enqueueWrite<T>(owner: object, sessionId: string, run: () => Promise<T>): Promise<T> {
  let byId = queues.get(owner);
  if (!byId) queues.set(owner, (byId = new Map()));
  const map = byId;
  const before = map.get(sessionId) ?? Promise.resolve();
  const result = before.then(run);
  const tail = result.then(
    () => undefined,
    () => undefined,
  );
  map.set(sessionId, tail);
  void tail.then(() => {
    if (map.get(sessionId) === tail) map.delete(sessionId);
  });
  return result;
}
