// The events a Forkpoint emits, each with its payload's type: what `fp.on(name, listener)` accepts.
import type { Checkpoint, Message, MoveResult, ToolInvocation } from "../models/types.js";
import type { RecoveryReport } from "./moves/recovery.js";
import type { PruneReport } from "./prune.js";

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
