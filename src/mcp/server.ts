// The MCP server of one session with a workspace: the official SDK's McpServer with forkpoint's ten tools registered.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js";
import type { SessionHandle } from "../index.js";
import { inThreadDiffer, type FilesDiffer } from "./files-diff.js";
import { inTurn } from "./move-gate.js";
import { toolError } from "./refusals.js";
import { inputs, outputs, type ToolName } from "./schemas.js";
import { oneLine } from "./shapes.js";
import { handlers, type ToolContext } from "./tools.js";
import { refuseOtherExclude } from "./workspace-session.js";

/** What the client may hand the model as the server's instructions (docs/mcp.md says the same at more length). */
export const INSTRUCTIONS = [
  "forkpoint keeps checkpoints of this workspace's files and rewinds them.",
  "Call checkpoint before a risky step (a refactor, a mass edit, a generator, a dependency upgrade) and name it after the step.",
  "To go back: plan_rollback first, read what it would write and delete, then rollback.",
  "A rollback is never destructive: undo takes it back, redo goes forward again, and the later files stay on their branch (branches, switch_branch).",
  "Files changed since the last checkpoint make rollback refuse with WORKSPACE_DRIFT; force: true saves them in a checkpoint of their own first.",
  "Ignored files, and files forkpoint never captured, are never touched.",
].join(" ");

interface ToolInfo {
  title: string;
  description: string;
  annotations: ToolAnnotations;
}

const reads: ToolAnnotations = { readOnlyHint: true, openWorldHint: false };
const moves: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false };

const TOOLS: Record<ToolName, ToolInfo> = {
  checkpoint: {
    title: "Checkpoint the workspace",
    description: "Saves the workspace's files as a checkpoint to come back to. Call it before a risky step.",
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
  },
  list_checkpoints: {
    title: "List checkpoints",
    description: "This workspace's checkpoints on every branch, newest first (pages with limit and cursor).",
    annotations: reads,
  },
  diff: {
    title: "Diff files",
    description: "The files changed between two checkpoints, or from a checkpoint to the files on disk now (without `to`), with a patch.",
    annotations: reads,
  },
  plan_rollback: {
    title: "Plan a rollback",
    description:
      "What rollback to a checkpoint would do, without doing it: files written back and deleted, files changed since the last checkpoint, and whether it would be refused.",
    annotations: reads,
  },
  rollback: {
    title: "Roll back the workspace",
    description:
      "Makes the workspace's files what they were at a checkpoint, on a new branch (the later files stay on theirs; undo takes it back). Refused with WORKSPACE_DRIFT when files changed since the last checkpoint, unless force: true.",
    annotations: moves,
  },
  undo: {
    title: "Undo the last move",
    description: "Takes back the last rollback, switch or redo: the files go back to where that move left.",
    annotations: moves,
  },
  redo: { title: "Redo", description: "Goes forward again to where the last undone move went.", annotations: moves },
  branches: {
    title: "List branches",
    description: "The session's branches: each rollback starts one; the current one is where the workspace is.",
    annotations: reads,
  },
  switch_branch: {
    title: "Switch branch",
    description: "Makes another branch current, and the workspace's files those of its newest checkpoint.",
    annotations: moves,
  },
  history: {
    title: "History",
    description: "What happened in this session (checkpoints, rollbacks, switches, undo, redo), newest first.",
    annotations: reads,
  },
};

/**
 * An MCP server over `session`, whose workspace the tools checkpoint and move (a new one per HTTP request is cheap);
 * `files` compares the workspace's files (give the server's worker: see files-diff.ts).
 */
export function createMcpServer(
  session: SessionHandle,
  version: string,
  files: FilesDiffer = inThreadDiffer,
  exclude?: readonly string[],
): McpServer {
  const server = new McpServer({ name: "forkpoint", version }, { instructions: INSTRUCTIONS });
  const context: ToolContext = { session, files };
  for (const name of Object.keys(TOOLS) as ToolName[]) {
    const handler = handlers[name] as (t: ToolContext, input: unknown) => ReturnType<(typeof handlers)[ToolName]>;
    server.registerTool(
      name,
      { ...TOOLS[name], inputSchema: inputs[name], outputSchema: outputs[name] },
      async (input: unknown): Promise<CallToolResult> => {
        try {
          // Started with an exclude list: refused once another server attached the workspace with another one.
          if (exclude) await refuseOtherExclude(session, exclude);
          const { structured, line, more } = await inTurn(session, name, async () => await handler(context, input));
          // One line whatever a name in it holds (paths are quoted where they need it; this is the last guard).
          const content: CallToolResult["content"] = [{ type: "text", text: oneLine(line) }];
          if (more) content.push({ type: "text", text: more });
          return { content, structuredContent: structured as Record<string, unknown> };
        } catch (error) {
          return toolError(error, name);
        }
      },
    );
  }
  return server;
}
