// The events a Forkpoint emits, typed per name, and the emitter that keeps a listener's throw from failing the call.
import { EventEmitter } from "node:events";
import type { ForkpointLogger } from "../../models/logger.js";
import type { Checkpoint, Message, MoveResult, ToolInvocation } from "../../models/types.js";
import { outsideHandlers } from "../../tools/handler-scope.js";
import type { RecoveryReport } from "../moves/recovery.js";
import type { PruneReport } from "../prune.js";

/** What each event passes its listeners (`fp.on(name, (payload) => ...)`). */
export interface ForkpointEvents {
  /** A checkpoint was created (by `checkpoint`, `turn`, or an automatic policy). */
  checkpoint: Checkpoint;
  /** A rollback finished (also `forkAfter`). */
  rollback: MoveResult;
  /** An edit finished: the move, and the new message on its branch. */
  edit: MoveResult & { message: Message };
  /** A switch of the current branch finished. */
  switch: MoveResult;
  /** A tool call was recorded as finished (by `invoke` or `recordToolCall`). */
  tool: ToolInvocation;
  /** A move undid an invocation. */
  undo: ToolInvocation & { applied: false };
  /** `s.undo()` finished: the session is back where its last move left from. */
  undoMove: MoveResult;
  /** `s.redo()` finished: the last undone move is done again. */
  redoMove: MoveResult;
  /** A move replayed an invocation. */
  replay: ToolInvocation & { applied: true };
  /** A checkpoint was handed off to a new session. */
  handoff: { from: { sessionId: string; checkpointId: string }; to: { id: string; userId: string } };
  /** Recovery at open resumed, or failed to resume, interrupted moves. */
  recovery: RecoveryReport;
  /** `prune` finished. */
  prune: PruneReport;
}

export type ForkpointEvent = keyof ForkpointEvents;
/** A listener of one event. It may be async: a rejection is logged like a throw. */
export type ForkpointListener<E extends ForkpointEvent> = (payload: ForkpointEvents[E]) => unknown;

/** Every event name once (a key missing here does not compile). */
const NAMES: Record<ForkpointEvent, true> = {
  checkpoint: true,
  rollback: true,
  edit: true,
  switch: true,
  tool: true,
  undo: true,
  replay: true,
  undoMove: true,
  redoMove: true,
  handoff: true,
  recovery: true,
  prune: true,
};
export const EVENT_NAMES = Object.keys(NAMES) as ForkpointEvent[];

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
