// The typed errors of the public API: one class per failure kind, each with a stable `code`.
import type { SavedDrift } from "./types.js";

/** Base class of every error forkpoint throws on purpose. `code` is stable across versions. */
export class ForkpointError extends Error {
  /** A stable machine-readable code, e.g. `NOT_FOUND`. */
  readonly code: string;
  /**
   * Set on an error of a forced workspace move (`force: true`) thrown after it saved the files changed outside
   * forkpoint: the checkpoint that holds them (nothing is lost; the move itself did not finish).
   */
  declare savedDrift?: SavedDrift;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** An id that does not exist, or that belongs to another user (the two are indistinguishable). */
export class NotFoundError extends ForkpointError {
  /** What kind of thing was looked up: "session", "checkpoint", "branch", "message", "tool", "tool call". */
  readonly kind: string;
  readonly id: string;
  constructor(kind: string, id: string) {
    super("NOT_FOUND", `${kind} not found: ${JSON.stringify(id)}`);
    this.kind = kind;
    this.id = id;
  }
}

/** Input that does not fit the contract; `field` names the offending part (a dotted path). */
export class ValidationError extends ForkpointError {
  readonly field: string;
  constructor(field: string, message: string, code = "VALIDATION_ERROR") {
    super(code, `${field}: ${message}`);
    this.field = field;
  }
}

/** A payload over a documented size or depth limit (see `Limits`). */
export class PayloadTooLargeError extends ValidationError {
  readonly limit: number;
  constructor(field: string, message: string, limit: number) {
    super(field, message, "PAYLOAD_TOO_LARGE");
    this.limit = limit;
  }
}

/**
 * A stored state this opener cannot read at its `stateVersion`: newer than it (`STATE_VERSION_UNKNOWN`), with no
 * migration step from its version (`STATE_MIGRATION_MISSING`), or a step that threw or returned no JSON
 * (`STATE_MIGRATION_FAILED`, the step's error as `cause`).
 */
export class StateVersionError extends ForkpointError {
  /** The version the state was recorded under. */
  readonly stateVersion: number;
  constructor(code: string, stateVersion: number, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
    this.stateVersion = stateVersion;
  }
}

/**
 * A guarded block (`atomic`) threw, and the rollback to its checkpoint failed too (`ATOMIC_ROLLBACK_FAILED`): `error`
 * (also the `cause`) is what the block threw, `rollbackError` why the rollback failed, `checkpointId` where it was going.
 */
export class AtomicRollbackError extends ForkpointError {
  readonly error: unknown;
  readonly rollbackError: unknown;
  readonly checkpointId: string;
  constructor(error: unknown, rollbackError: unknown, checkpointId: string) {
    super(
      "ATOMIC_ROLLBACK_FAILED",
      `the guarded block failed (${error instanceof Error ? error.message : String(error)}) and rolling back to checkpoint ` +
        `${checkpointId} failed too (${rollbackError instanceof Error ? rollbackError.message : String(rollbackError)})`,
      { cause: error },
    );
    this.error = error;
    this.rollbackError = rollbackError;
    this.checkpointId = checkpointId;
  }
}

/** Stored data whose checksum or hash chain does not match: corruption or tampering. */
export class IntegrityError extends ForkpointError {
  constructor(message: string) {
    super("INTEGRITY_ERROR", message);
  }
}

/** The operation conflicts with what is stored (ids that already exist, a checkpoint in use, a move under way). */
export class ConflictError extends ForkpointError {
  constructor(message: string, code = "CONFLICT") {
    super(code, message);
  }
}

/** The database cannot be used: not a forkpoint/SQLite file, written by a newer version, read-only, or closed. */
export class DatabaseError extends ForkpointError {
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}

/** A read-only open of a database an older version wrote: it cannot be migrated, and this version's statements need it. */
export const schemaTooOld = () =>
  new DatabaseError(
    "SCHEMA_TOO_OLD",
    "this database was written by an older version of forkpoint and is opened read-only, so it cannot be migrated: open it writable once",
  );

/** A long call (verify, exportSession, importSession, prune) stopped because its `signal` was aborted. */
export class AbortedError extends ForkpointError {
  /** `cause` is the signal's reason (an `AbortError` DOMException unless the caller gave one). */
  constructor(reason: unknown) {
    super("ABORTED", `the call was aborted: ${errorText(reason)}`, { cause: reason });
  }
}

/** What a move had done when it stopped: shared by the undo and replay failures. */
export interface MoveFailureDetail {
  /** Invocations undone by this attempt before it stopped. */
  undone: unknown[];
  /** Invocations replayed by this attempt before it stopped. */
  replayed: unknown[];
  /** The invocation(s) whose handler threw, with the error message. */
  failed: unknown[];
  /** Invocations whose undo or replay in this move a crash interrupted: whether their effect is there is unknown. */
  unknown: unknown[];
}

/** A tool handler threw during a move under the `stop` policy: what the move had done, and which call failed. */
export abstract class ToolMoveError extends ForkpointError implements MoveFailureDetail {
  readonly invocationId: string;
  readonly tool: string;
  readonly undone: unknown[];
  readonly replayed: unknown[];
  readonly failed: unknown[];
  readonly unknown: unknown[];
  constructor(code: string, step: string, invocationId: string, tool: string, detail: MoveFailureDetail, cause: unknown) {
    super(code, `${step} of ${tool} invocation ${invocationId} failed: ${errorText(cause)}`, { cause });
    this.invocationId = invocationId;
    this.tool = tool;
    this.undone = detail.undone;
    this.replayed = detail.replayed;
    this.failed = detail.failed;
    this.unknown = detail.unknown;
  }
}

/** An `undo` handler threw during a move under the `stop` policy. Nothing else changed; call the move again to continue. */
export class ToolUndoError extends ToolMoveError {
  constructor(invocationId: string, tool: string, detail: MoveFailureDetail, cause: unknown) {
    super("UNDO_FAILED", "undo", invocationId, tool, detail, cause);
  }
}

/** A `run` handler threw while replaying an invocation during a move under the `stop` policy. */
export class ToolReplayError extends ToolMoveError {
  constructor(invocationId: string, tool: string, detail: MoveFailureDetail, cause: unknown) {
    super("REPLAY_FAILED", "replay", invocationId, tool, detail, cause);
  }
}

/** A tool handler did not finish within its tool's `timeoutMs`: its signal was aborted and the engine stopped waiting. */
export class ToolTimeoutError extends ForkpointError {
  readonly tool: string;
  readonly invocationId: string;
  /** Which handler: "run" (a call), "undo" or "replay" (a move's step). */
  readonly step: "run" | "undo" | "replay";
  readonly timeoutMs: number;
  constructor(tool: string, invocationId: string, step: "run" | "undo" | "replay", timeoutMs: number) {
    super(
      "TOOL_TIMEOUT",
      `the ${step} handler of tool ${JSON.stringify(tool)} (invocation ${invocationId}) did not finish within ${timeoutMs} ms`,
    );
    this.tool = tool;
    this.invocationId = invocationId;
    this.step = step;
    this.timeoutMs = timeoutMs;
  }
}

/** A readable one-line message for anything thrown. */
export function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  try {
    return String(error);
  } catch {
    return "unprintable error";
  }
}
