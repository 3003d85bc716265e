// Ready tool definitions an agent loop hands to a model so it can manage its own session's checkpoints.
// Each has a name, a description, a JSON Schema for its input and a handler returning structured JSON.
import { z } from "zod";
import { ForkpointError, errorText } from "../models/errors.js";
import type { JsonValue } from "../models/json.js";
import { toWellFormed } from "../models/strings.js";
import type { Checkpoint, MoveResult } from "../models/types.js";
import type { SessionHandle } from "./session-handle.js";

/** A tool a model can call: hand `name`, `description` and `inputSchema` to the model, call `handler` with its input. */
export interface AgentTool {
  name: string;
  description: string;
  /** JSON Schema (draft 2020-12) of the input object. */
  inputSchema: Record<string, unknown>;
  /** Never throws: `{ ok: true, ... }` or `{ ok: false, error: { code, message } }`. */
  handler: (input: unknown) => Promise<AgentToolOutput>;
}

/** What a handler returns: plain JSON, with `ok` saying whether it worked. */
export type AgentToolOutput = { [key: string]: JsonValue } & { ok: boolean };

const checkpointJson = (c: Checkpoint) => ({
  id: c.id,
  name: c.name,
  position: c.position,
  branchId: c.branchId,
  auto: c.auto,
  createdAt: c.createdAt.toISOString(),
  expiresAt: c.expiresAt ? c.expiresAt.toISOString() : null,
});
const callsJson = (list: MoveResult["undone"]) => list.map((t) => ({ id: t.id, tool: t.tool }));

function agentTool<S extends z.ZodType>(
  name: string,
  description: string,
  schema: S,
  run: (input: z.output<S>) => Promise<Record<string, JsonValue>>,
): AgentTool {
  return {
    name,
    description,
    inputSchema: z.toJSONSchema(schema) as Record<string, unknown>,
    handler: async (input): Promise<AgentToolOutput> => {
      const parsed = schema.safeParse(input ?? {});
      if (!parsed.success) return { ok: false, error: { code: "VALIDATION_ERROR", message: z.prettifyError(parsed.error) } };
      try {
        return { ok: true, ...(await run(parsed.data)) };
      } catch (error) {
        const code = error instanceof ForkpointError ? error.code : "TOOL_ERROR";
        // A tool's own error text may hold lone surrogates; the output goes back to a model and onto the track.
        return { ok: false, error: { code, message: toWellFormed(errorText(error)) } };
      }
    },
  };
}

/** The six checkpoint tools, bound to one session (and so to its user). */
export function checkpointTools(session: SessionHandle): AgentTool[] {
  const id = z.string().min(1).describe("A checkpoint id, as returned by create_checkpoint or list_checkpoints");
  return [
    agentTool(
      "create_checkpoint",
      "Save a named checkpoint of the conversation, its state and tool calls, to return to later.",
      z.object({ name: z.string().min(1).max(200).optional().describe("A short label, e.g. 'before booking'") }),
      async ({ name }) => ({ checkpoint: checkpointJson(await session.checkpoint(name ? { name } : {})) }),
    ),
    agentTool(
      "list_checkpoints",
      "List this session's checkpoints, newest first.",
      z.object({
        name: z.string().min(1).optional(),
        auto: z.boolean().optional().describe("Only automatic (true) or only manual (false) checkpoints"),
        limit: z.number().int().min(1).max(100).optional(),
        cursor: z.string().optional().describe("nextCursor of a previous call, for the next page"),
      }),
      async (o) => {
        const page = await session.listCheckpoints(o);
        return { checkpoints: page.items.map(checkpointJson), nextCursor: page.nextCursor };
      },
    ),
    agentTool(
      "rollback",
      "Go back to a checkpoint: the conversation continues from there on a new branch and tool side effects after it are undone.",
      z.object({ checkpointId: id }),
      async ({ checkpointId }) => {
        const r = await session.rollback(checkpointId);
        return {
          branchId: r.branch.id,
          undone: callsJson(r.undone),
          replayed: callsJson(r.replayed),
          skipped: callsJson(r.skipped),
          failed: r.failed.map((f) => ({ id: f.invocation.id, tool: f.invocation.tool, error: f.error })),
          unknown: callsJson(r.unknown),
        };
      },
    ),
    agentTool(
      "delete_checkpoint",
      "Delete a checkpoint that is no longer needed.",
      z.object({ checkpointId: id }),
      async ({ checkpointId }) => {
        await session.deleteCheckpoint(checkpointId);
        return { deleted: checkpointId };
      },
    ),
    agentTool(
      "checkpoint_info",
      "Describe a checkpoint: when it was taken, how many messages and tool calls it holds, and its state.",
      z.object({ checkpointId: id }),
      async ({ checkpointId }) => {
        const r = await session.restore(checkpointId);
        return { checkpoint: checkpointJson(r.checkpoint), messages: r.history.length, toolCalls: r.toolTrack.length, state: r.state };
      },
    ),
    agentTool(
      "cleanup_auto_checkpoints",
      "Delete automatic checkpoints, keeping the newest few and any a branch starts from.",
      z.object({ keepLatest: z.number().int().min(0).max(1000).default(5) }),
      async ({ keepLatest }) => {
        const deleted: string[] = [];
        const kept: string[] = [];
        let cursor: string | null = null;
        let seen = 0;
        do {
          const page = await session.listCheckpoints({ auto: true, limit: 100, cursor: cursor ?? undefined });
          for (const cp of page.items) {
            if (seen++ < keepLatest) {
              kept.push(cp.id);
              continue;
            }
            try {
              await session.deleteCheckpoint(cp.id);
              deleted.push(cp.id);
            } catch (error) {
              if (error instanceof ForkpointError && error.code === "CHECKPOINT_IN_USE") kept.push(cp.id);
              // Already deleted by someone else (another agent cleaning up at the same time): nothing left to do.
              else if (!(error instanceof ForkpointError && error.code === "NOT_FOUND")) throw error;
            }
          }
          cursor = page.nextCursor;
        } while (cursor);
        return { deleted, kept };
      },
    ),
  ];
}
