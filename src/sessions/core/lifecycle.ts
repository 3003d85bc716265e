// A Forkpoint's lifecycle: the signal its close raises, and the operations that close waits for.
import type { EngineContext } from "./context.js";

/** The closing signal and the operations a close waits for (see `EngineContext.closing` and `track`). */
export function engineLifecycle(): Pick<EngineContext, "closing" | "track"> & { shutdown(reason: unknown): Promise<void> } {
  const controller = new AbortController();
  const running = new Set<Promise<unknown>>();
  return {
    closing: controller.signal,
    track<T>(operation: Promise<T>): Promise<T> {
      const settled = operation.then(
        () => undefined,
        () => undefined,
      );
      running.add(settled);
      void settled.then(() => running.delete(settled));
      return operation;
    },
    /**
     * Aborts every handler's signal, then waits until the operations running them have returned: each handler's outcome
     * recorded, or (cut short while it ran) left unknown for recovery, never recorded as something it may not be.
     */
    async shutdown(reason: unknown): Promise<void> {
      if (!controller.signal.aborted) controller.abort(reason);
      while (running.size > 0) await Promise.all(running);
    },
  };
}
