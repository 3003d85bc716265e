// aiCheckpointTools: forkpoint's checkpoint tools (create, list, rollback, ...) as an AI SDK ToolSet.
import { jsonSchema, tool, type Tool, type ToolSet } from "ai";
import { selfMove } from "../adapters/loop-guard.js";
import { checkpointTools, type AgentToolOutput } from "../sessions/agent-tools.js";
import type { SessionHandle } from "../sessions/session-handle.js";

/**
 * The six checkpoint tools bound to one session, for `generateText({ tools })`: each returns `{ ok: true, ... }` or
 * `{ ok: false, error: { code, message } }` and never throws. A rollback the model makes with them is its own: the
 * session's `undoableTools` go on from the new branch instead of refusing.
 * @example const tools = { ...undoableTools(s, myTools, undos), ...aiCheckpointTools(s) }
 */
export function aiCheckpointTools(s: SessionHandle): ToolSet {
  const out: Record<string, Tool<unknown, AgentToolOutput>> = {};
  for (const t of checkpointTools(s)) {
    const handler = t.name === "rollback" ? (input: unknown) => selfMove(s.id, () => t.handler(input)) : t.handler;
    out[t.name] = tool<unknown, AgentToolOutput>({
      description: t.description,
      inputSchema: jsonSchema<unknown>(t.inputSchema as Parameters<typeof jsonSchema>[0]),
      execute: (input) => handler(input),
    });
  }
  return out;
}
