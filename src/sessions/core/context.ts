// What every engine operation needs: the store, limits, tools, policies, the event emitter and a clock; and how it
// names a session.
import type { EventEmitter } from "node:events";
import type { Limits } from "../../models/limits.js";
import type { ForkpointLogger } from "../../models/logger.js";
import type { Store } from "../../store/port/index.js";
import type { ToolRegistry } from "../../tools/registry.js";
import type { LandingWrites } from "./landing-writes.js";
import type { StateSchema } from "./state-schema.js";
import type { MoveOwnership } from "./ownership.js";

export interface AutoCheckpointSettings {
  everyMessages?: number;
  afterToolCalls?: boolean;
}

export interface EngineContext {
  store: Store;
  /** Who owns the moves this process journals, and when another owner's may be taken over. */
  ownership: MoveOwnership;
  limits: Limits;
  /** The state version new states are written under and the migrations older ones are read through (default: 1, none). */
  stateSchema?: StateSchema;
  tools: ToolRegistry;
  autoCheckpoint: AutoCheckpointSettings;
  /** How long (ms) a checkpoint that captures files waits for another process's tool call or move of its session. */
  busyWaitMs: number;
  events: EventEmitter;
  /** `openForkpoint`'s logger: for what no call can throw. */
  logger: Required<ForkpointLogger>;
  /** Opened with `readonly: true`: a move that changes nothing records no stay for undo (no undo can run here). */
  readonly?: boolean;
  /** Milliseconds since the epoch (fractional: µs resolution); strictly increasing within a process. */
  now(): number;
  /**
   * Per-session coordination within this process: moves take the session exclusively; tool calls share it,
   * so a move never starts while a call is running and no call starts while a move is running. Made from inside a
   * tool handler of the same session, a call that would wait for that handler is refused (`REENTRANT_CALL`, naming
   * `call`); a tool call from inside a call's `run` joins the running call.
   */
  withSessionLock<T>(sessionId: string, fn: () => Promise<T>, mode?: "exclusive" | "shared", call?: string): Promise<T>;
  /** Aborted when the forkpoint closes: tool handlers' signals follow it, and no new handler starts. */
  closing: AbortSignal;
  /**
   * Registers an operation that runs tool handlers: closing waits for it to record how its handlers ended, or to leave
   * the one closing cut short running (unknown, as a crash leaves it: see `abandonedAtClose`).
   */
  track<T>(operation: Promise<T>): Promise<T>;
  /**
   * Writes to each session (by id) still landing that its tool calls follow: a LangGraph saver's puts, which a step's
   * nodes run beside. A call journaled before them would land before the input it answers (see `invoke`).
   */
  landing: LandingWrites;
}

/** A session as the engine addresses it: its id and the user every call is scoped to. */
export interface SessionRef {
  id: string;
  userId: string;
}
