// One forkpoint tool per framework tool name: runs, undoes and replays the framework's own execute/undo, bound per session.
import type { CallOptions } from "../sessions/calls/journal.js";
import { invoke } from "../sessions/invoke.js";
import { ConflictError, ValidationError } from "../models/errors.js";
import type { JsonValue } from "../models/json.js";
import type { EngineContext } from "../sessions/core/context.js";
import { SessionHandle, sessionEngine } from "../sessions/session-handle.js";
import { defineTool, type ToolContext, type ToolDefinition } from "../tools/define-tool.js";

/** How a framework runs one of its tools: live (with the framework's own call options) or replayed by a move. */
export interface FrameworkBinding {
  /** `live` is what the framework passed to the wrapped tool; undefined for a replay (or a call made through `invoke`). */
  run: (args: any, ctx: ToolContext, live: unknown) => unknown;
  /** Absent: the tool's calls are irreversible. */
  undo?: (recorded: { args: any; result: any }, ctx: ToolContext) => Promise<void> | void;
}

interface Dispatcher {
  name: string;
  /** The binding each session's wrapped tools gave in this process. */
  bySession: Map<string, FrameworkBinding>;
  /**
   * The binding given to `openForkpoint({ tools })` (aiToolDefinitions), for sessions that bound none here; null when
   * the tool was registered by wrapping: another session's functions may close over that session's world.
   */
  general: FrameworkBinding | null;
  /** The framework's options of each live call being journaled and run, by session and call id. */
  live: Map<string, unknown>;
}

const dispatchers = new WeakMap<ToolDefinition, Dispatcher>();
/** Dispatchers by engine and name, so a live call finds where to leave its options. */
const byEngine = new WeakMap<EngineContext, Map<string, Dispatcher>>();

/** Call ids are a model's: two sessions' loops may use the same ones at once. */
const liveKey = (sessionId: string, callId: string): string => `${sessionId}\u0000${callId}`;

function bindingFor(d: Dispatcher, sessionId: string): FrameworkBinding {
  const binding = d.bySession.get(sessionId) ?? d.general;
  if (binding) return binding;
  throw new ConflictError(
    `tool ${JSON.stringify(d.name)} is bound for no call of session ${JSON.stringify(sessionId)} here: wrap its tools for it ` +
      `(undoableTools / undoableAgentTools) or give their definitions to openForkpoint({ tools })`,
    "TOOL_NOT_REGISTERED",
  );
}

/**
 * A forkpoint tool that routes to the binding of the session it serves (`general`, when given, serves the sessions
 * that bound none). Reversible or not is fixed by the first binding (the registry reads it when a call is
 * journaled): a later binding of the same name must agree.
 */
export function frameworkTool(name: string, binding: FrameworkBinding, general: boolean): ToolDefinition {
  const d: Dispatcher = { name, bySession: new Map(), general: general ? binding : null, live: new Map() };
  const run = (args: JsonValue, ctx: ToolContext): any => {
    const live = !ctx.replay && ctx.callId ? d.live.get(liveKey(ctx.sessionId, ctx.callId)) : undefined;
    return bindingFor(d, ctx.sessionId).run(args, ctx, live);
  };
  const undo = async (recorded: { args: JsonValue; result: JsonValue }, ctx: ToolContext) => {
    const own = bindingFor(d, ctx.sessionId).undo;
    if (!own)
      throw new ConflictError(
        `tool ${JSON.stringify(name)} is bound without an undo for session ${JSON.stringify(ctx.sessionId)}`,
        "TOOL_NOT_REGISTERED",
      );
    await own(recorded, ctx);
  };
  const definition = defineTool(binding.undo ? { name, run, undo } : { name, run });
  dispatchers.set(definition, d);
  return definition;
}

/**
 * Binds framework tools to a session and makes sure its opener knows them (registering them on first use): moves of
 * that session then undo and replay their calls with these very functions.
 */
export function bindFrameworkTools(s: SessionHandle, bindings: Record<string, FrameworkBinding>, where: string): void {
  if (!(s instanceof SessionHandle))
    throw new ValidationError(where, "expects a session handle (from fp.createSession or fp.getSession) first");
  const { ctx } = sessionEngine(s);
  for (const [name, binding] of Object.entries(bindings)) {
    const known = ctx.tools.find(name);
    if (!known) {
      const definition = frameworkTool(name, binding, false);
      ctx.tools.add(definition);
      ownDispatcher(ctx, name, dispatchers.get(definition)!).bySession.set(s.id, binding);
      continue;
    }
    const d = dispatchers.get(known);
    if (!d)
      throw new ConflictError(
        `a tool named ${JSON.stringify(name)} is already registered with defineTool: give the framework tool another name`,
        "TOOL_NAME_TAKEN",
      );
    if ((typeof known.undo === "function") !== (typeof binding.undo === "function")) {
      throw new ConflictError(
        `tool ${JSON.stringify(name)} is registered ${known.undo ? "with" : "without"} an undo: bind it the same way`,
        "TOOL_UNDO_MISMATCH",
      );
    }
    ownDispatcher(ctx, name, d).bySession.set(s.id, binding);
  }
}

function ownDispatcher(ctx: EngineContext, name: string, d: Dispatcher): Dispatcher {
  let map = byEngine.get(ctx);
  if (!map) byEngine.set(ctx, (map = new Map()));
  map.set(name, d);
  return d;
}

/**
 * Journals the call (with the framework's call id) on `onBranch`, after message `after` when given (see `invoke`), runs
 * the live binding with `options`, records the result. With `requestId`, once per session and id (see `invoke`). With
 * `check`, the adapter's precondition, checked in the unit that journals the call (see `CallOptions`).
 */
export async function invokeFramework(
  s: SessionHandle,
  name: string,
  args: unknown,
  call: {
    callId: string;
    onBranch: string;
    options: unknown;
    after?: string | undefined;
    requestId?: string | undefined;
    check?: CallOptions["check"];
    ownCalls?: CallOptions["ownCalls"];
  },
): Promise<unknown> {
  const engine = sessionEngine(s);
  const d = byEngine.get(engine.ctx)?.get(name);
  const key = liveKey(s.id, call.callId);
  d?.live.set(key, call.options);
  try {
    // `after` and `requestId` go as the caller's options, validated as `invoke`'s are.
    const options =
      call.after === undefined && call.requestId === undefined
        ? undefined
        : {
            ...(call.after === undefined ? {} : { after: call.after }),
            ...(call.requestId === undefined ? {} : { requestId: call.requestId }),
          };
    return await engine.run((ctx, ref) =>
      invoke(
        ctx,
        ref,
        name,
        args as JsonValue,
        {
          callId: call.callId,
          onBranch: call.onBranch,
          ...(call.check === undefined ? {} : { check: call.check }),
          ...(call.ownCalls === undefined ? {} : { ownCalls: call.ownCalls }),
        },
        options,
      ),
    );
  } finally {
    d?.live.delete(key);
  }
}
