// undoableTools: an AI SDK ToolSet whose calls are journaled on a session's track, undone and replayed by its moves.
import type { InferToolInput, InferToolOutput, Tool, ToolExecutionOptions, ToolSet } from "ai";
import { bindFrameworkTools, frameworkTool, invokeFramework, type FrameworkBinding } from "../adapters/framework-tools.js";
import { guardLoop, stopLoop } from "../adapters/loop-guard.js";
import { ValidationError } from "../models/errors.js";
import type { SessionHandle } from "../sessions/session-handle.js";
import type { ToolContext, ToolDefinition } from "../tools/define-tool.js";

/** Reverses one call of a tool, given its recorded input and the result of its latest application. */
export type AiToolUndo<T extends Tool = Tool> = (
  recorded: { args: InferToolInput<T>; result: InferToolOutput<T> },
  ctx: ToolContext,
) => Promise<void> | void;

/** An undo per tool name; a tool without one is recorded as irreversible. */
export type AiToolUndos<TOOLS extends ToolSet> = { [K in keyof TOOLS]?: AiToolUndo<TOOLS[K]> };

export interface UndoableToolsOptions {
  /**
   * Pass its `signal` to `generateText`/`streamText` (`abortSignal`): it is aborted (with a `ConflictError`, code
   * `SESSION_MOVED`) when the session moves (rollback, edit, switch in this process) or a call finds it moved.
   */
  abortController?: AbortController;
}

type Execute = (input: unknown, options: ToolExecutionOptions) => unknown;

/** What a live call hands its binding: the AI SDK's options, and where a streaming execute's outputs go as they come. */
interface LiveCall {
  options: ToolExecutionOptions;
  onOutput?: (output: unknown) => void;
}

/** The tool's final output: an `execute` that streams preliminary outputs (an async iterable) ends with it. */
async function finalOutput(value: unknown, onOutput?: (output: unknown) => void): Promise<unknown> {
  if (value === null || typeof value !== "object" || !(Symbol.asyncIterator in value)) return value;
  let last: unknown;
  for await (const item of value as AsyncIterable<unknown>) {
    onOutput?.(item);
    last = item;
  }
  return last;
}

/** An `async function*` execute: the AI SDK streams its outputs as preliminary results, so the wrapper must too. */
const streams = (execute: unknown): boolean => Object.prototype.toString.call(execute) === "[object AsyncGeneratorFunction]";

/** Runs `call` (which reports outputs through the callback it is given), yielding each output as it comes. */
async function* relay(call: (onOutput: (output: unknown) => void) => Promise<unknown>): AsyncGenerator<unknown> {
  const queue: unknown[] = [];
  let wake: (() => void) | null = null;
  let finished = false;
  const running = call((output) => {
    queue.push(output);
    wake?.();
  }).finally(() => {
    finished = true;
    wake?.();
  });
  running.catch(() => undefined); // rethrown below, once the outputs before the failure are out
  for (;;) {
    while (queue.length > 0) yield queue.shift();
    if (finished) break;
    await new Promise<void>((resolve) => (wake = resolve));
    wake = null;
  }
  await running;
}

function bindings(tools: ToolSet, undos: Record<string, unknown>, where: string): Record<string, FrameworkBinding> {
  if (typeof tools !== "object" || tools === null)
    throw new ValidationError("tools", `${where} expects an AI SDK ToolSet ({ name: tool({ ... }) })`);
  if (typeof undos !== "object" || undos === null) throw new ValidationError("undos", "must be an object of undo functions by tool name");
  for (const [name, undo] of Object.entries(undos)) {
    if (!(name in tools)) throw new ValidationError(`undos.${name}`, "names no tool of the ToolSet");
    if (undo !== undefined && typeof undo !== "function") throw new ValidationError(`undos.${name}`, "must be a function");
  }
  const out: Record<string, FrameworkBinding> = {};
  for (const [name, t] of Object.entries(tools)) {
    const execute = t?.execute as Execute | undefined;
    // A tool without execute runs in the client (or needs approval): nothing runs here to journal.
    if (typeof execute !== "function") continue;
    const undo = undos[name] as FrameworkBinding["undo"];
    out[name] = {
      run: (args, ctx, live) => {
        const call = live as LiveCall | undefined;
        const options = call?.options ?? { toolCallId: ctx.callId ?? ctx.invocationId, messages: [], abortSignal: ctx.signal };
        return finalOutput(execute(args, options), call?.onOutput);
      },
      ...(undo ? { undo } : {}),
    };
  }
  return out;
}

/**
 * Wraps an AI SDK ToolSet for one session: each call is journaled on the session's track before it runs (the AI SDK's
 * `toolCallId` as its `callId`), then runs the tool's own `execute`, then records the result. Moves of the session
 * undo the calls with `undos[name]` and replay them (on a switch back) with `execute(args, { toolCallId, messages: [] })`.
 * The tools are registered on the session's opener under their names (for every session; each session's moves use
 * the functions it was last wrapped with in this process). Once the session is on another branch than when the tools
 * were wrapped, their calls are refused (`ConflictError`, code `SESSION_MOVED`): a loop never writes effects onto the
 * branch a rollback made, and `abortController` (when given) ends it.
 * @example const tools = undoableTools(s, { write_file: writeFile }, { write_file: async ({ args }) => rm(args.path) })
 */
export function undoableTools<TOOLS extends ToolSet>(
  s: SessionHandle,
  tools: TOOLS,
  undos: AiToolUndos<TOOLS> = {},
  options: UndoableToolsOptions = {},
): TOOLS {
  const bound = bindings(tools, undos as Record<string, unknown>, "undoableTools");
  bindFrameworkTools(s, bound, "undoableTools");
  const guard = guardLoop(s, options.abortController);
  const wrapped: Record<string, unknown> = {};
  for (const [name, t] of Object.entries(tools)) {
    if (!(name in bound)) {
      wrapped[name] = t;
      continue;
    }
    const journaled = async (input: unknown, callOptions: ToolExecutionOptions, onOutput?: (output: unknown) => void) => {
      const onBranch = await guard.branch;
      const live: LiveCall = { options: callOptions, ...(onOutput ? { onOutput } : {}) };
      try {
        return await invokeFramework(s, name, input, { callId: callOptions.toolCallId, onBranch, options: live });
      } catch (error) {
        stopLoop(guard, error);
        throw error;
      }
    };
    wrapped[name] = {
      ...t,
      execute: streams(t.execute)
        ? (input: unknown, callOptions: ToolExecutionOptions) => relay((onOutput) => journaled(input, callOptions, onOutput))
        : (input: unknown, callOptions: ToolExecutionOptions) => journaled(input, callOptions),
    };
  }
  return wrapped as TOOLS;
}

/**
 * The same tools as forkpoint tool definitions, for `openForkpoint({ tools })`: moves made before any `undoableTools`
 * call in this process (recovery at open, a rollback from another handle) can then undo and replay them too.
 */
export function aiToolDefinitions<TOOLS extends ToolSet>(tools: TOOLS, undos: AiToolUndos<TOOLS> = {}): ToolDefinition[] {
  return Object.entries(bindings(tools, undos as Record<string, unknown>, "aiToolDefinitions")).map(([name, b]) =>
    frameworkTool(name, b, true),
  );
}
