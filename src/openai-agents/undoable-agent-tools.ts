// undoableAgentTools: @openai/agents function tools whose calls are journaled on a session's track, undone and replayed.
import { setTimeout as sleep } from "node:timers/promises";
import { RunContext, type FunctionTool, type Tool } from "@openai/agents";
import { bindFrameworkTools, frameworkTool, invokeFramework, type FrameworkBinding } from "../adapters/framework-tools.js";
import { guardLoop, stopLoop } from "../adapters/loop-guard.js";
import { ConflictError, ValidationError } from "../models/errors.js";
import { setOwn, type JsonValue } from "../models/json.js";
import { sessionEngine, type SessionHandle } from "../sessions/session-handle.js";
import type { ToolContext, ToolDefinition } from "../tools/define-tool.js";
import { approvedCallCheck, approvedCallRequest } from "./call-items.js";
import { madeCall, memoryBranch } from "./run-memory.js";

/** Reverses one call of a tool, given its recorded (parsed) input and the result of its latest application. */
export type AgentToolUndo = (recorded: { args: any; result: any }, ctx: ToolContext) => Promise<void> | void;

export interface UndoableAgentToolsOptions {
  /** Pass its `signal` to `run(agent, input, { signal })`: aborted when the session moves (see undoableTools in forkpoint/ai). */
  abortController?: AbortController;
  /**
   * Tells a call that failed from what its tool returned, for tools whose own `errorFunction` turns a throw into an
   * output (the SDK gives a wrapper nothing else to go by). Default: the SDK's default error text, exactly.
   */
  failedOutput?: (output: unknown, tool: string) => boolean;
}

type Invoke = FunctionTool["invoke"];
interface LiveCall {
  runContext: Parameters<Invoke>[0];
  input: string;
  details: Parameters<Invoke>[2];
}

/**
 * What the SDK's default `errorFunction` makes of a throw inside a function tool's own invoke (agents-core 0.20
 * tool.ts, `defaultToolErrorFunction`): a fixed text, the error itself withheld from the model and from any wrapper.
 * That text as the call's whole output is the only sign a wrapper gets that the call failed.
 */
const SDK_TOOL_ERROR_TEXT = "An error occurred while running the tool. Please try again.";

const isSdkErrorText = (output: unknown): boolean => output === SDK_TOOL_ERROR_TEXT;

/** A call its tool reported as failed through its output: recorded as failed (never undone nor replayed). */
class ReportedToolError extends Error {
  override readonly name = "ToolError";
  constructor(readonly output: unknown) {
    super(typeof output === "string" ? output : "the tool reported a failure (failedOutput)");
  }
}

/** The output, or a ReportedToolError carrying it when it reports a failure. */
async function failedAsThrown(output: Promise<unknown>, failed: (output: unknown) => boolean): Promise<unknown> {
  const value = await output;
  if (failed(value)) throw new ReportedToolError(value);
  return value;
}

/** Whether the run's context records the call as approved (a `needsApproval` tool's call, approved on its RunState). */
const approved = (runContext: unknown, toolName: string, callId: string): boolean =>
  (runContext as Partial<Pick<RunContext, "isToolApproved">> | null)?.isToolApproved?.({ toolName, callId }) === true;

const parse = (input: string): { ok: true; args: JsonValue } | { ok: false } => {
  try {
    return { ok: true, args: JSON.parse(input) as JsonValue };
  } catch {
    return { ok: false };
  }
};

/** How long a resume waits before asking again whether the other resume's call has ended: doubled up to the longest. */
const FIRST_WAIT_MS = 20;
const LONGEST_WAIT_MS = 1_000;

/**
 * `invokeFramework`, and with a request id (an approved call) once per id: while the same approval's call runs for
 * another resume (`CALL_IN_PROGRESS`), waits for it, and answers with its recorded result.
 */
async function invokeOnce(
  s: SessionHandle,
  name: string,
  args: unknown,
  call: Parameters<typeof invokeFramework>[3],
  signal: AbortSignal | undefined,
): Promise<unknown> {
  for (let wait = FIRST_WAIT_MS; ; wait = Math.min(LONGEST_WAIT_MS, wait * 2)) {
    try {
      return await invokeFramework(s, name, args, call);
    } catch (error) {
      if (!(call.requestId !== undefined && error instanceof ConflictError && error.code === "CALL_IN_PROGRESS")) throw error;
      await sleep(wait, undefined, signal ? { signal } : {});
    }
  }
}

/** The forkpoint bindings of the function tools among `tools` (each run by its own invoke, undone by `undos[name]`). */
function agentBindings(
  tools: readonly Tool<any>[],
  undos: Record<string, AgentToolUndo>,
  options: UndoableAgentToolsOptions,
  where: string,
): Record<string, FrameworkBinding> {
  if (!Array.isArray(tools)) throw new ValidationError("tools", `${where} expects an array of Agents SDK tools`);
  if (typeof undos !== "object" || undos === null) throw new ValidationError("undos", "must be an object of undo functions by tool name");
  if (typeof options !== "object" || options === null) throw new ValidationError("options", "must be an object when given");
  // Only what the function takes: a misspelt option, or one of undoableAgentTools' given to agentToolDefinitions, is refused.
  const { failedOutput, abortController, ...unknown } = options;
  const extra = [...Object.keys(unknown), ...(abortController !== undefined && where !== "undoableAgentTools" ? ["abortController"] : [])];
  if (extra.length > 0) throw new ValidationError("options", `unknown option(s): ${extra.join(", ")}`);
  if (abortController !== undefined && !(abortController instanceof AbortController))
    throw new ValidationError("options.abortController", "must be an AbortController");
  const functions = new Map<string, FunctionTool<any, any, any>>();
  for (const t of tools) if (t?.type === "function") functions.set(t.name, t as FunctionTool<any, any, any>);
  for (const [name, undo] of Object.entries(undos)) {
    if (!functions.has(name)) throw new ValidationError(`undos.${name}`, "names no function tool of the list");
    if (typeof undo !== "function") throw new ValidationError(`undos.${name}`, "must be a function");
  }
  if (failedOutput !== undefined && typeof failedOutput !== "function")
    throw new ValidationError("options.failedOutput", "must be a function");
  const bindings: Record<string, FrameworkBinding> = {};
  for (const [name, t] of functions) {
    const original = t.invoke.bind(t);
    // Own keys only: a tool named `toString` without an undo is not undone by Object.prototype's.
    const undo = Object.hasOwn(undos, name) ? undos[name] : undefined;
    const failed = failedOutput ? (output: unknown) => isSdkErrorText(output) || failedOutput(output, name) : isSdkErrorText;
    setOwn(bindings, name, {
      run: (args, ctx, live) => {
        if (live) {
          const l = live as LiveCall;
          return failedAsThrown(original(l.runContext, l.input, l.details), failed);
        }
        const input = JSON.stringify(args);
        const callId = ctx.callId ?? ctx.invocationId;
        return failedAsThrown(
          original(new RunContext(), input, { toolCall: { type: "function_call", callId, name, arguments: input }, signal: ctx.signal }),
          failed,
        );
      },
      ...(undo ? { undo } : {}),
    });
  }
  return bindings;
}

/**
 * Wraps Agents SDK function tools (from `tool({ name, parameters, execute })`) for one session, as `undoableTools`
 * does for the AI SDK: each call is journaled (its `callId` as forkpoint's) before it runs, undone by `undos[name]` and
 * replayed by the tool itself (`invoke` with the recorded arguments and call id, in a fresh `RunContext`). A tool
 * without an undo is irreversible; other kinds of tools (hosted, computer, ...) pass through unchanged. Once the
 * session is on another branch than when they were wrapped, calls are refused (`ConflictError` `SESSION_MOVED`);
 * a `ForkpointSession`'s `popItem` and `clearSession` are followed, but a run in flight goes on from the new branch
 * only when the pop or clear went through its own `ForkpointSession` (another's stops its later calls).
 * A throw the SDK's default `errorFunction` turns into its fixed text for the model is recorded as a failed call (with
 * that text as its error: the SDK keeps the thrown error to itself); a custom `errorFunction`'s output is told from a
 * success by `options.failedOutput`, else recorded as one.
 * @example new Agent({ name: "coder", tools: undoableAgentTools(s, [writeFile], { write_file: ({ args }) => rm(args.path) }) })
 */
export function undoableAgentTools<T extends Tool<any>[]>(
  s: SessionHandle,
  tools: T,
  undos: Record<string, AgentToolUndo> = {},
  options: UndoableAgentToolsOptions = {},
): T {
  const bindings = agentBindings(tools, undos, options, "undoableAgentTools");
  bindFrameworkTools(s, bindings, "undoableAgentTools");
  const guard = guardLoop(s, options.abortController);
  return tools.map((t) => {
    if (t?.type !== "function") return t;
    const original = t.invoke.bind(t);
    const invoke: Invoke = async (runContext, input, details) => {
      const parsed = parse(input);
      // Input that is not JSON reaches the tool's own parser, which reports it to the model: nothing runs to journal.
      if (!parsed.ok) return original(runContext, input, details);
      const onBranch = await guard.branch;
      const callId = details?.toolCall?.callId;
      const live: LiveCall = { runContext, input, details };
      try {
        if (callId === undefined) throw new ValidationError(`tool ${t.name}`, "was called without a toolCall.callId");
        // The tools follow any ForkpointSession's pop or clear of the session (a conversation's own move); a run whose
        // memory is another, still on the branch it read, was moved under: its calls stop, as after a rollback.
        const ran = memoryBranch(runContext, s.id);
        if (ran !== undefined && ran !== onBranch)
          throw new ConflictError(`session ${JSON.stringify(s.id)} moved: the agent run is stopped`, "SESSION_MOVED");
        // An approved call runs in a run resumed from its saved state, maybe in a new request after another tab moved
        // the session: its function_call, saved when the run stopped, must be in the conversation it runs in.
        // Told by its tool and arguments too: a model numbering its calls per response reuses an earlier call's id.
        // The same approval resumed twice (a double-clicked "approve", two servers, a retry after a crash) runs it once.
        // Checked again where the call is journaled: a rejection of it saved meanwhile refuses it (CALL_ANSWERED).
        let requestId: string | undefined;
        let check: ReturnType<typeof approvedCallCheck> | undefined;
        if (approved(runContext, t.name, callId)) {
          const call = {
            callId,
            name: t.name,
            ...(typeof details?.toolCall?.arguments === "string" ? { arguments: details.toolCall.arguments } : {}),
          };
          requestId = await sessionEngine(s).run((ctx, ref) => approvedCallRequest(ctx, ref, onBranch, call));
          check = approvedCallCheck(call);
        }
        // The run's items go where its calls are, also when it saves only its input (a run a move stopped).
        madeCall(runContext, callId);
        return await invokeOnce(s, t.name, parsed.args, { callId, onBranch, options: live, requestId, check }, details?.signal);
      } catch (error) {
        // Recorded as failed; the model sees what the tool made of its error, as it would unwrapped.
        if (error instanceof ReportedToolError) return error.output as Awaited<ReturnType<Invoke>>;
        stopLoop(guard, error);
        throw error;
      }
    };
    return { ...t, invoke };
  }) as T;
}

/**
 * The same function tools as forkpoint tool definitions, for `openForkpoint({ tools })`: moves of a session whose
 * tools this process has not wrapped (recovery at open, a rollback on another server or handle) can then undo calls
 * with `undos[name]` and replay them through the tool's own `invoke` (in a fresh `RunContext`), as `undoableAgentTools`'s.
 * A session wrapped here uses the functions it was wrapped with.
 * @example openForkpoint({ path, tools: agentToolDefinitions([writeFile], { write_file: ({ args }) => rm(args.path) }) })
 */
export function agentToolDefinitions(
  tools: readonly Tool<any>[],
  undos: Record<string, AgentToolUndo> = {},
  options: Pick<UndoableAgentToolsOptions, "failedOutput"> = {},
): ToolDefinition[] {
  return Object.entries(agentBindings(tools, undos, options, "agentToolDefinitions")).map(([name, b]) => frameworkTool(name, b, true));
}
