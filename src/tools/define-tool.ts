// Tool definitions: a `run` handler and, for reversible tools, an `undo` that receives the recorded args and result.
import { ValidationError } from "../models/errors.js";
import type { JsonValue } from "../models/json.js";

/** What a handler learns about the call it serves. */
export interface ToolContext {
  sessionId: string;
  userId: string;
  /** The id of the invocation on the track. */
  invocationId: string;
  /** True when `run` is called to replay a recorded invocation during a move. */
  replay: boolean;
}

/** A tool forkpoint can run, record, undo and replay. */
export interface ToolDefinition<Args extends JsonValue = any, Result extends JsonValue | void = any> {
  name: string;
  /** Optional: what the tool does (shown to models by the agent-facing tools). */
  description?: string;
  /** Does the work; its return value (JSON) is recorded as the result. */
  run: (args: Args, ctx: ToolContext) => Promise<Result> | Result;
  /** Reverses the work, given the recorded args and the result of the latest application. Absent: irreversible. */
  undo?: (recorded: { args: Args; result: Result }, ctx: ToolContext) => Promise<void> | void;
}

/** Defines a tool; checks its shape once so mistakes show at startup, not mid-rollback. */
export function defineTool<Args extends JsonValue = any, Result extends JsonValue | void = any>(
  definition: ToolDefinition<Args, Result>,
): ToolDefinition<Args, Result> {
  if (typeof definition !== "object" || definition === null) throw new ValidationError("tool", "must be an object");
  if (typeof definition.name !== "string" || definition.name.trim() === "") {
    throw new ValidationError("tool.name", "must be a non-empty string");
  }
  if (typeof definition.run !== "function") throw new ValidationError(`tool ${definition.name}.run`, "must be a function");
  if (definition.undo !== undefined && typeof definition.undo !== "function") {
    throw new ValidationError(`tool ${definition.name}.undo`, "must be a function when given");
  }
  return Object.freeze({ ...definition });
}
