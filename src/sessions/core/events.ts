// The emitter of a Forkpoint's events: a listener's throw never fails the call whose change it reports.
import { EventEmitter } from "node:events";
import type { ForkpointLogger } from "../../models/logger.js";
import { outsideHandlers } from "../../tools/handler-scope.js";

/**
 * Runs every listener even when one throws. Events are emitted once a change is committed: a listener's throw (or
 * rejection) goes to the logger instead of rejecting a call whose change is stored, which a caller would then retry.
 */
export class ListenerSafeEmitter extends EventEmitter {
  readonly #logger: Required<ForkpointLogger>;

  constructor(logger: Required<ForkpointLogger>) {
    super();
    this.#logger = logger;
  }

  override emit(event: string | symbol, ...args: unknown[]): boolean {
    const listeners = this.rawListeners(event);
    const failed = (error: unknown) =>
      this.#logger.error(`forkpoint: a "${String(event)}" listener failed (the change it reports is stored)`, error);
    for (const listener of listeners) {
      try {
        // A listener is not the tool handler whose nested call may have emitted the event (see outsideHandlers).
        const result: unknown = outsideHandlers(() => Reflect.apply(listener, this, args));
        if (result instanceof Promise) result.catch(failed);
      } catch (error) {
        failed(error);
      }
    }
    return listeners.length > 0;
  }
}
