// aiCheckpointTools: forkpoint's checkpoint tools (create, list, rollback, ...) as an AI SDK ToolSet.
import { jsonSchema, tool, type ToolExecutionOptions, type ToolSet } from "ai";
import { selfMove } from "../adapters/loop-guard.js";
import { checkpointTools, type AgentToolOutput } from "../sessions/checkpoint-tools.js";
import type { SessionHandle } from "../sessions/session-handle.js";
import { moveInStep } from "./step-order.js";
import { loopOf } from "./undoable-tools.js";

/**
 * The six checkpoint tools bound to one session, for `generateText({ tools })`: each returns `{ ok: true, ... }` or
 * `{ ok: false, error: { code, message } }` and never throws. A rollback the model makes with them is its own: the
 * `undoableTools` of the loop that called it go on from the new branch instead of refusing; other loops on the
 * session stop (`SESSION_MOVED`), as after any other move. The wrapped calls of its own step keep the order the AI SDK
 * starts them in (the model's): those before it run first and are undone by it, those after it wait and run on its branch.
 * @example const tools = { ...undoableTools(s, myTools, undos), ...aiCheckpointTools(s) }
 */
export function aiCheckpointTools(s: SessionHandle): ToolSet {
  const out: ToolSet = {};
  for (const t of checkpointTools(s)) {
    const handler =
      t.name === "rollback"
        ? (input: unknown, options?: ToolExecutionOptions<unknown>) =>
            moveInStep(options, () => selfMove(s.id, () => t.handler(input), loopOf(options)))
        : t.handler;
    // No contextSchema: the tools need no context (the session is bound here), so none is asked of toolsContext.
    out[t.name] = tool({
      description: t.description,
      inputSchema: jsonSchema<unknown>(t.inputSchema as Parameters<typeof jsonSchema>[0]),
      execute: (input: unknown, options: ToolExecutionOptions<unknown>): Promise<AgentToolOutput> => handler(input, options),
    });
  }
  return out;
}
