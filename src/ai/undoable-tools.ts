// undoableTools: an AI SDK ToolSet whose calls are journaled on a session's track, undone and replayed by its moves.
import {
  asSchema,
  type InferToolInput,
  type InferToolOutput,
  type StepResult,
  type Tool,
  type ToolExecutionOptions,
  type ToolSet,
} from "ai";
import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { bindFrameworkTools, frameworkTool, invokeFramework, type FrameworkBinding } from "../adapters/framework-tools.js";
import { guardLoop, loopBranch, stopLoop } from "../adapters/loop-guard.js";
import { ConflictError, ValidationError } from "../models/errors.js";
import { setOwn } from "../models/json.js";
import type { SessionHandle } from "../sessions/session-handle.js";
import { FollowedChanged } from "./followed-check.js";
import { callInStep } from "./step-order.js";
import { answerForms } from "./answer-forms.js";
import { stepCallKeys, stepMadeKeys } from "./own-call-keys.js";
import { ownCallKey } from "../sessions/log/own-calls.js";
import type { ToolContext, ToolDefinition } from "../tools/define-tool.js";

/** Reverses one call of a tool, given its recorded input and the result of its latest application. */
export type AiToolUndo<T extends Tool = Tool> = (
  recorded: { args: InferToolInput<T>; result: InferToolOutput<T> },
  ctx: ToolContext,
) => Promise<void> | void;

/** An undo per tool name; a tool without one is recorded as irreversible. */
export type AiToolUndos<TOOLS extends ToolSet> = { [K in keyof TOOLS]?: AiToolUndo<TOOLS[K]> };

/**
 * The `toolsContext` that `generateText`/`streamText` take for these tools: each tool with a `contextSchema` by name,
 * with the context it declares (a tool whose context may be undefined is an optional key; tools without one are absent).
 */
export type AiToolsContext<TOOLS extends ToolSet> = StepResult<TOOLS>["toolsContext"];

/** The session and user whose move replays a call, for a `toolsContext` that depends on them. */
export interface AiReplayCall {
  sessionId: string;
  userId: string;
}

/** Whether a ToolSet has a tool whose context must be given (as `generateText` requires `toolsContext` then). */
type NeedsContext<TOOLS extends ToolSet> = {} extends AiToolsContext<TOOLS> ? false : true;

export interface UndoableToolsOptions<TOOLS extends ToolSet = ToolSet> {
  /**
   * Pass its `signal` to `generateText`/`streamText` (`abortSignal`): it is aborted (with a `ConflictError`, code
   * `SESSION_MOVED`) when the session moves (rollback, edit, switch in this process) or a call finds it moved.
   */
  abortController?: AbortController;
  /**
   * The context each tool's `execute` receives when forkpoint itself calls it (a move replaying a call: no AI SDK loop
   * runs then to pass its own): the same map `generateText` takes as `toolsContext`, or a function giving it for the
   * replaying session. A replay passes `toolsContext[name]`, checked by the tool's `contextSchema`, as the AI SDK does;
   * calls made by `generateText`/`streamText` get the loop's own. Required when a tool declares a required context.
   */
  toolsContext?: AiToolsContext<TOOLS> | ((call: AiReplayCall) => AiToolsContext<TOOLS> | PromiseLike<AiToolsContext<TOOLS>>);
  /**
   * The request's question (the `lastMessageId` that `saveChat` returned for the request's messages): the loop's calls
   * follow it on its own lineage, as the answer saved `{ after }` it does, so they land on the answer's branch even when
   * another tab appended to the session meanwhile (see `invoke`'s `after`); once a form of the answer is stored after
   * it (saved in `onStepEnd`), they follow that form, on the answer's branch. Never another request's for the same
   * question (a double submit, an approval POSTed again whose model goes on otherwise): calls or forms naming calls the
   * loop did not make are not its own, and its calls fork right after what both share. A call the same request makes again (the
   * same `toolCallId`, input and messages, after the same message, wrapped on the same branch: a tool approval POSTed
   * twice) returns the recorded result instead of running twice, waiting for the first call's tool to end; a later
   * step's call or a second call in one step runs, whatever id the model gives it. Null or absent: on the current branch;
   * after a rollback the loop's own model made (`aiCheckpointTools`), on the rollback's branch too.
   */
  after?: string | null;
}

/** The options argument: required (for its `toolsContext`) when a tool of the set declares a required context. */
type OptionsArgument<TOOLS extends ToolSet> =
  NeedsContext<TOOLS> extends true
    ? [options: UndoableToolsOptions<TOOLS> & { toolsContext: NonNullable<UndoableToolsOptions<TOOLS>["toolsContext"]> }]
    : [options?: UndoableToolsOptions<TOOLS>];

/** A tool's `execute` as forkpoint calls it: the context is the tool's own, which this code only passes along. */
type Execute = (input: unknown, options: ToolExecutionOptions<unknown>) => unknown;

/** What a live call hands its binding: the AI SDK's options, and where a streaming execute's outputs go as they come. */
interface LiveCall {
  options: ToolExecutionOptions<unknown>;
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

type ReplayContext = UndoableToolsOptions["toolsContext"];

/**
 * The context a replay passes to tool `name`: what the AI SDK would pass given `toolsContext` (its entry for the tool),
 * checked and normalized by the tool's `contextSchema` when it has one.
 */
async function replayContext(name: string, t: ToolSet[string], toolsContext: ReplayContext, ctx: ToolContext): Promise<unknown> {
  const map = typeof toolsContext === "function" ? await toolsContext({ sessionId: ctx.sessionId, userId: ctx.userId }) : toolsContext;
  const context: unknown = map != null && Object.hasOwn(map, name) ? (map as Record<string, unknown>)[name] : undefined;
  if (t.contextSchema == null) return context;
  const checked = await asSchema(t.contextSchema).validate?.(context);
  if (!checked) return context;
  if (checked.success) return checked.value;
  const problem =
    context === undefined
      ? "is missing: give it to undoableTools / aiToolDefinitions ({ toolsContext }) so that a move can replay the tool"
      : "does not match the tool's contextSchema";
  throw new ValidationError(`toolsContext.${name}`, `${problem} (${checked.error.message})`);
}

function bindings(
  tools: ToolSet,
  undos: Record<string, unknown>,
  options: UndoableToolsOptions,
  where: string,
): Record<string, FrameworkBinding> {
  if (typeof tools !== "object" || tools === null)
    throw new ValidationError("tools", `${where} expects an AI SDK ToolSet ({ name: tool({ ... }) })`);
  if (typeof undos !== "object" || undos === null) throw new ValidationError("undos", "must be an object of undo functions by tool name");
  for (const [name, undo] of Object.entries(undos)) {
    if (!Object.hasOwn(tools, name)) throw new ValidationError(`undos.${name}`, "names no tool of the ToolSet");
    if (undo !== undefined && typeof undo !== "function") throw new ValidationError(`undos.${name}`, "must be a function");
  }
  if (typeof options !== "object" || options === null) throw new ValidationError("options", "must be an object when given");
  const { toolsContext, after, abortController, ...unknown } = options as UndoableToolsOptions;
  // A misspelt option (`afterr`) would leave the calls on the current branch, not after the question: refused.
  if (Object.keys(unknown).length > 0) throw new ValidationError("options", `unknown option(s): ${Object.keys(unknown).join(", ")}`);
  if (abortController !== undefined && !(abortController instanceof AbortController))
    throw new ValidationError("options.abortController", "must be an AbortController");
  if (after != null && (typeof after !== "string" || after === ""))
    throw new ValidationError("options.after", "must be a message id (the lastMessageId saveChat returned)");
  if (toolsContext != null && typeof toolsContext !== "object" && typeof toolsContext !== "function")
    throw new ValidationError("options.toolsContext", "must be an object of contexts by tool name, or a function giving one");
  const out: Record<string, FrameworkBinding> = {};
  for (const [name, t] of Object.entries(tools)) {
    const execute: Execute | undefined = t?.execute;
    // A tool without execute runs in the client (or needs approval): nothing runs here to journal.
    if (typeof execute !== "function") continue;
    // Own keys only: a tool named `toString` without an undo is not undone by Object.prototype's.
    const undo = (Object.hasOwn(undos, name) ? undos[name] : undefined) as FrameworkBinding["undo"];
    setOwn(out, name, {
      run: async (args, ctx, live) => {
        const call = live as LiveCall | undefined;
        const options = call?.options ?? {
          toolCallId: ctx.callId ?? ctx.invocationId,
          messages: [],
          abortSignal: ctx.signal,
          context: await replayContext(name, t, toolsContext, ctx),
        };
        return finalOutput(await execute(args, options), call?.onOutput);
      },
      ...(undo ? { undo } : {}),
    });
  }
  return out;
}

/**
 * What tells an AI SDK loop's tool calls from another loop's: its abort signal and its first message (the same objects
 * in every step of one `generateText`/`streamText`), whichever it has.
 */
export function loopOf(options: Partial<ToolExecutionOptions<unknown>> | undefined): object[] {
  const first: unknown = Array.isArray(options?.messages) ? options.messages[0] : undefined;
  return [options?.abortSignal, first].filter((mark): mark is object => typeof mark === "object" && mark !== null);
}

/** How long a call made again waits before asking again whether the first one's tool has ended: doubled up to the longest. */
const FIRST_WAIT_MS = 20;
const LONGEST_WAIT_MS = 1_000;

/**
 * The request id of a loop's call that follows message `after` (a route handler's): the same call made again by the
 * same request sent again (an approval POSTed twice: the AI SDK runs an approved call from the request's messages)
 * follows the same stored message on the same branch with the same messages, and gets the recorded result instead of
 * running twice. A regenerate or a rollback is another branch, a new question another message, a later step of the
 * loop other messages (the steps before it added): their calls run, whatever ids a model reuses (some number them per
 * response, `call_0`). `occurrence` counts the calls with the same key already made through the same wrapped tools:
 * two calls with one id in one step are two calls, and a request sent again counts its own from 0.
 */
function callRequestId(
  onBranch: string,
  after: string,
  name: string,
  toolCallId: string,
  input: unknown,
  messages: unknown,
  occurrence: (key: string) => number,
): string {
  const digest = (value: unknown) =>
    createHash("sha256")
      .update(JSON.stringify(value) ?? "null")
      .digest("hex");
  const key = digest([onBranch, after, name, toolCallId, input ?? null, digest(messages ?? [])]);
  return `forkpoint/ai:${digest([key, occurrence(key)])}`;
}

/** How many times a call reads again what its loop's answer follows when a save keeps landing between its read and its journal. */
const FOLLOW_READS = 8;

/**
 * Wraps an AI SDK ToolSet for one session: each call is journaled on the session's track before it runs (the AI SDK's
 * `toolCallId` as its `callId`), then runs the tool's own `execute`, then records the result. Moves of the session
 * undo the calls with `undos[name]` and replay them (on a switch back) with
 * `execute(args, { toolCallId, messages: [], context: toolsContext[name] })`, `toolsContext` being the option's.
 * The tools are registered on the session's opener under their names (for every session; each session's moves use
 * the functions it was last wrapped with in this process). Once the session is on another branch than when the tools
 * were wrapped, their calls are refused (`ConflictError`, code `SESSION_MOVED`): a loop never writes effects onto the
 * branch a rollback made, and `abortController` (when given) ends it. The tools keep their types (context included).
 * @example const tools = undoableTools(s, { write_file: writeFile }, { write_file: async ({ args }) => rm(args.path) })
 */
export function undoableTools<TOOLS extends ToolSet>(
  s: SessionHandle,
  tools: TOOLS,
  undos?: AiToolUndos<TOOLS>,
  ...[options]: OptionsArgument<TOOLS>
): TOOLS {
  const given: UndoableToolsOptions<TOOLS> = options ?? {};
  const bound = bindings(tools, (undos ?? {}) as Record<string, unknown>, given as UndoableToolsOptions, "undoableTools");
  bindFrameworkTools(s, bound, "undoableTools");
  const guard = guardLoop(s, given.abortController);
  const question = given.after ?? undefined;
  // How many calls with each key these tools have made: the nth call with a key is another call than the first.
  const made = new Map<string, number>();
  // The calls these tools made (`ownCallKey`s): a stored answer naming one is this loop's (see answerIn).
  const mine = new Set<string>();
  const occurrence = (key: string): number => {
    const n = made.get(key) ?? 0;
    made.set(key, n + 1);
    return n;
  };
  const wrapped: Record<string, unknown> = {};
  for (const [name, t] of Object.entries(tools)) {
    if (!Object.hasOwn(bound, name)) {
      setOwn(wrapped, name, t);
      continue;
    }
    const journaled = async (input: unknown, callOptions: ToolExecutionOptions<unknown>, onOutput?: (output: unknown) => void) => {
      const onBranch = await loopBranch(guard, s.id, loopOf(callOptions));
      // After the loop's own rollback the question is on a branch the session left: the calls go on the rollback's.
      const after = guard.selfMoved ? undefined : question;
      const live: LiveCall = { options: callOptions, ...(onOutput ? { onOutput } : {}) };
      // The loop's calls before this one, by id, tool and input (`ownCallKey`: a model numbering its calls per response
      // gives another request's calls these ids): those these tools made, those its earlier steps made with other
      // tools, and those of the same step made through other wrapped tools of the loop (a route may wrap several sets).
      const earlier = stepCallKeys(callOptions.messages);
      const step = stepMadeKeys(callOptions.messages);
      const key = ownCallKey(callOptions.toolCallId, name, input ?? null);
      const all = (): Set<string> => new Set([...mine, ...earlier, ...step]);
      let read = after === undefined ? undefined : await answerForms(s, onBranch, after, all());
      // Read again (see below) without this call's own key, as the first time, unless an earlier call had it too.
      const own = mine.has(key) || step.has(key) || earlier.includes(key) ? null : key;
      mine.add(key);
      step.add(key);
      const ours = (): Set<string> => {
        const calls = all();
        if (own !== null) calls.delete(own);
        return calls;
      };
      // Keyed on the question, not the form followed: the same call of a request sent again has the same id.
      const requestId =
        after === undefined
          ? undefined
          : callRequestId(onBranch, after, name, callOptions.toolCallId, input, callOptions.messages, occurrence);
      for (let wait = FIRST_WAIT_MS, tried = 0, reads = 1; ;) {
        const follows = read?.ids[tried];
        try {
          return await invokeFramework(s, name, input, {
            callId: callOptions.toolCallId,
            onBranch,
            options: live,
            after: follows,
            requestId,
            check: read?.followed,
            // A fork right after the question keeps the loop's own calls only, not another request's for the same question.
            // Read where the call is journaled: the step's other calls, started at once, may be journaled before it.
            ...(after === undefined ? {} : { ownCalls: ours }),
          });
        } catch (error) {
          // A step's save landed between the read and the journal (nothing written): what to follow is read again.
          if (error instanceof FollowedChanged && after !== undefined && reads < FOLLOW_READS) {
            read = await answerForms(s, onBranch, after, ours());
            tried = 0;
            reads++;
            continue;
          }
          if (error instanceof ConflictError && requestId !== undefined) {
            // The same call made by the same request sent twice at once: its result, once the first one's tool ends.
            if (error.code === "CALL_IN_PROGRESS") {
              await sleep(wait, undefined, callOptions.abortSignal ? { signal: callOptions.abortSignal } : {});
              wait = Math.min(LONGEST_WAIT_MS, wait * 2);
              continue;
            }
            // Made before by the same request sent again, following another of the answer's forms: its result.
            if (error.code === "REQUEST_ID_REUSED" && tried + 1 < (read?.ids.length ?? 1)) {
              tried++;
              continue;
            }
          }
          stopLoop(guard, error);
          throw error;
        }
      }
    };
    setOwn(wrapped, name, {
      ...t,
      execute: streams(t.execute)
        ? (input: unknown, callOptions: ToolExecutionOptions<unknown>) =>
            relay((onOutput) => callInStep(callOptions, () => journaled(input, callOptions, onOutput)))
        : (input: unknown, callOptions: ToolExecutionOptions<unknown>) => callInStep(callOptions, () => journaled(input, callOptions)),
    });
  }
  return wrapped as TOOLS;
}

/**
 * The same tools as forkpoint tool definitions, for `openForkpoint({ tools })`: moves made before any `undoableTools`
 * call in this process (recovery at open, a rollback from another handle) can then undo and replay them too. Their
 * replays get `options.toolsContext` (a function of the replaying session, for a context that depends on it).
 */
export function aiToolDefinitions<TOOLS extends ToolSet>(
  tools: TOOLS,
  undos?: AiToolUndos<TOOLS>,
  ...[options]: OptionsArgument<TOOLS>
): ToolDefinition[] {
  const given = (options ?? {}) as UndoableToolsOptions;
  return Object.entries(bindings(tools, (undos ?? {}) as Record<string, unknown>, given, "aiToolDefinitions")).map(([name, b]) =>
    frameworkTool(name, b, true),
  );
}
