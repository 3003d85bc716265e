// Tool definitions: a `run` handler and, for reversible tools, an `undo` that receives the recorded args and result.
import { ValidationError } from "../models/errors.js";
import { idSchema, parseInput } from "../models/inputs.js";
import type { JsonValue } from "../models/json.js";

/** What a handler learns about the call it serves. */
export interface ToolContext {
  sessionId: string;
  userId: string;
  /** The id of the invocation on the track. */
  invocationId: string;
  /** The call id a framework gave the call (the AI SDK's `toolCallId`), as recorded; null when none was given. */
  callId?: string | null;
  /** True when `run` is called to replay a recorded invocation during a move. */
  replay: boolean;
  /**
   * Aborted when the tool's `timeoutMs` elapses or the forkpoint is closed: the engine has stopped waiting (the call
   * or step is recorded as failed) and nothing the handler returns afterwards is recorded. Pass it on to what you await.
   */
  signal: AbortSignal;
}

/** setTimeout's limit: a longer delay would fire at once. */
const MAX_TIMEOUT_MS = 2_147_483_647;

/** A tool forkpoint can run, record, undo and replay. */
export interface ToolDefinition<Args extends JsonValue = any, Result extends JsonValue | void = any> {
  name: string;
  /** Optional: what the tool does (shown to models by the agent-facing tools). */
  description?: string;
  /** Does the work; its return value (JSON) is recorded as the result. */
  run: (args: Args, ctx: ToolContext) => Promise<Result> | Result;
  /** Reverses the work, given the recorded args and the result of the latest application. Absent: irreversible. */
  undo?: (recorded: { args: Args; result: Result }, ctx: ToolContext) => Promise<void> | void;
  /**
   * Time limit of each `run`, `undo` and replay, in ms (default: none). On expiry the handler's signal aborts and it
   * fails with a `ToolTimeoutError` (code `TOOL_TIMEOUT`): a failed call for `invoke`, a failed step for a move.
   * The engine stops waiting; the handler stops only if it heeds its signal. What a timed-out `run` still does is
   * not undone by any move (its call is failed, and failed calls are never undone); an `undo` that finishes after its
   * time limit leaves its call applied, so the next move runs that undo again: make undos safe to repeat. A call the
   * handler makes through forkpoint (`s.invoke`) has its own signal and time limit, and a move waits for it.
   */
  timeoutMs?: number;
  /**
   * Where the tool's effects lie, for moves that restore a workspace's files (default `"anywhere"`). `"workspace"`: only
   * in the attached workspace's files, so a call whose run changed no file there (a delete of a file that was not there)
   * did nothing a snapshot misses: a move restoring files that hold it marks it applied with them, as any call whose
   * effect is in the files, and never runs it again over them. With `"anywhere"`, such a call is taken to act outside
   * the files (an email, another directory): such moves undo and replay it through the tool. Declare `"workspace"`
   * only for a tool whose every effect lands in files a checkpoint captures (not empty directories, excluded or ignored
   * paths, links out of the workspace): what it does elsewhere is neither captured nor replayed.
   */
  effects?: "workspace" | "anywhere";
}

/** Defines a tool; checks its shape once so mistakes show at startup, not mid-rollback. */
export function defineTool<Args extends JsonValue = any, Result extends JsonValue | void = any>(
  definition: ToolDefinition<Args, Result>,
): ToolDefinition<Args, Result> {
  checkTool(definition);
  return Object.freeze({ ...definition });
}

/** Throws a `ValidationError` naming what is wrong with a tool definition. */
export function checkTool(definition: ToolDefinition): void {
  if (typeof definition !== "object" || definition === null) throw new ValidationError("definition", "must be an object");
  if (typeof definition.name !== "string" || definition.name.trim() === "") {
    throw new ValidationError("name", "must be a non-empty string");
  }
  // Calls name a tool as the API parses a name (well-formed, trimmed, at most 512): one that parse changes is unreachable.
  if (parseInput(idSchema, definition.name, "name") !== definition.name) {
    throw new ValidationError("name", "must not start or end with whitespace");
  }
  if (typeof definition.run !== "function")
    throw new ValidationError("run", `must be a function (tool ${JSON.stringify(definition.name)})`);
  if (definition.undo !== undefined && typeof definition.undo !== "function") {
    throw new ValidationError("undo", `must be a function when given (tool ${JSON.stringify(definition.name)})`);
  }
  if (definition.effects !== undefined && definition.effects !== "workspace" && definition.effects !== "anywhere") {
    throw new ValidationError("effects", `must be "workspace" or "anywhere" when given (tool ${JSON.stringify(definition.name)})`);
  }
  const t = definition.timeoutMs;
  if (t !== undefined && !(Number.isSafeInteger(t) && t > 0 && t <= MAX_TIMEOUT_MS)) {
    throw new ValidationError(
      "timeoutMs",
      `must be a positive integer of at most ${MAX_TIMEOUT_MS} (ms) when given (tool ${JSON.stringify(definition.name)})`,
    );
  }
}
