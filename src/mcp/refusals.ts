// A failed tool call as the MCP client gets it: a tool error whose one line names the code and what to do next.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ForkpointError, ValidationError } from "../index.js";
import type { ToolName } from "./schemas.js";
import { oneLine } from "./shapes.js";

/** What a model can do about each refusal, by code (and, where it differs, by tool). */
function hint(code: string, tool: ToolName, message: string): string {
  switch (code) {
    case "WORKSPACE_DRIFT":
      // Something in the way of a file to write (a link, a file no longer captured): force does not move it.
      if (message.startsWith("cannot restore the workspace "))
        return "force: true does not help here: remove or move what is in the way, then try again.";
      return tool === "rollback"
        ? "Call rollback again with force: true to save those files in a checkpoint of their own first (nothing is lost)."
        : "Call checkpoint {} to keep those files first, then try again.";
    case "TOOL_NOT_REGISTERED":
      return "A person can start this MCP server with --tools MODULE (a module exporting those tools' definitions, with their undo), then try again.";
    case "IRREVERSIBLE":
      return "A tool call on the way cannot be undone (or, a clone's or an import's, never ran here to be replayed), so the agent may not move past it; a person can, with the forkpoint CLI: forkpoint rollback --scope both (without it, the files stay as they are).";
    case "NOT_FOUND":
      // The server's own session, deleted while it runs (`forkpoint delete`): nothing any tool names can be found.
      if (message.startsWith("session not found"))
        return "This server's session was deleted while it ran: restart this MCP server, which starts a new one (the files are as they are).";
      return "list_checkpoints and branches list what exists.";
    case "NOTHING_TO_UNDO":
    case "NOTHING_TO_REDO":
      return "history {} shows what happened.";
    case "MOVE_IN_PROGRESS":
      // The library's message names fp.recover(), which is no tool here: the server recovers when it starts.
      return "Try again in a moment. If it keeps coming back, a move was interrupted: restarting this MCP server finishes it (opening the database recovers interrupted moves).";
    case "CALL_IN_PROGRESS":
      return "Try again in a moment.";
    case "WORKSPACE_WRITE_FAILED":
      // The error's own message says nothing was changed.
      return "A person can fix what stopped the write (permissions, a full disk), then try again.";
    case "WORKSPACE_MISSING":
      return "Nothing was changed. A person can put the directory back (or restart this server in another one).";
    case "DIFF_TIMEOUT":
      return tool === "diff"
        ? "diff between two other checkpoints, or look at the file itself."
        : "rollback itself refuses (WORKSPACE_DRIFT) when files changed since the last checkpoint, and undo {} takes it back.";
    case "VALIDATION_ERROR":
      // The files of the checkpoint (or of one before it) are not in this database: an import's or a clone's.
      if (tool === "rollback" && message.startsWith("scope: "))
        return "rollback puts the files back too: list_checkpoints shows later checkpoints to roll back to; a person can move the conversation alone with the forkpoint CLI: forkpoint rollback --scope conversation.";
      return "";
    case "PAYLOAD_TOO_LARGE":
    case "MALFORMED_TEXT":
      if (!message.startsWith("workspace file ")) return "";
      return "A person can move that file out of the workspace, or name it in a .gitignore file in the workspace (honoured from the next checkpoint on).";
    default:
      return "";
  }
}

/** The text of `error` for a model: `CODE: message` and a hint, on one line. */
export function refusalText(error: unknown, tool: ToolName): string {
  if (!(error instanceof ForkpointError))
    return oneLine(`INTERNAL: ${(error instanceof Error ? error.message : String(error)).replace(/\s*\n\s*/g, " ")}`);
  const saved = error.savedDrift
    ? ` The files changed since the last checkpoint were saved in checkpoint ${error.savedDrift.checkpointId} before this failed.`
    : "";
  const next = hint(error.code, tool, error.message);
  // One line whatever the message holds (a tool's error can span several); the library's advice for a program
  // (openForkpoint({ tools }), { unregistered: "leave" }) is no tool of this server's: the hint says what is.
  // Nor does the agent see the library's options: `refuseIrreversible` (always set here), or a `scope` no tool but
  // plan_rollback takes (rollback moves the files and the conversation).
  const noScope = error instanceof ValidationError && error.field === "scope" && tool !== "plan_rollback";
  const message = (noScope ? error.message.replace(/^scope: /, "") : error.message)
    .replace(/\s*\n\s*/g, " ")
    .replace(/; register them in openForkpoint\(\{ tools \}\).*$/, "")
    .replace(/, and refuseIrreversible is set$/, "")
    .replace(/\.$/, "");
  return oneLine(`${error.code}: ${message}.${saved}${next ? ` ${next}` : ""}`);
}

/** A tool error: text only, so that a client validating results against the output schema has nothing to refuse. */
export const toolError = (error: unknown, tool: ToolName): CallToolResult => ({
  content: [{ type: "text", text: refusalText(error, tool) }],
  isError: true,
});
