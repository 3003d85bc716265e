// A refusal's text: one line, the error's code first, what a forced move saved, and what the model can do next.
import { describe, expect, it } from "vitest";
import { ConflictError, ForkpointError } from "../../src/index.js";
import { refusalText, toolError } from "../../src/mcp/refusals.js";

describe("refusalText", () => {
  it("names the code, keeps one line and one full stop, and says what to do next", () => {
    const drift = new ConflictError("the workspace changed (a.txt);\n  take a checkpoint.", "WORKSPACE_DRIFT");
    expect(refusalText(drift, "rollback")).toBe(
      "WORKSPACE_DRIFT: the workspace changed (a.txt); take a checkpoint. Call rollback again with force: true to save those files in a checkpoint of their own first (nothing is lost).",
    );
    expect(refusalText(drift, "undo")).toMatch(/^WORKSPACE_DRIFT: .* Call checkpoint \{\} to keep those files first, then try again\.$/);
    expect(refusalText(new ForkpointError("SOMETHING_NEW", "it failed"), "undo")).toBe("SOMETHING_NEW: it failed.");
    expect(refusalText(new TypeError("boom\nat line 2"), "diff")).toBe("INTERNAL: boom at line 2");
  });

  it("answers a move in progress with what an MCP client can do: wait, or restart the server (no fp.recover() tool)", () => {
    const busy = new ConflictError(
      "a move of this session is under way (mv_1, process 7); try again when it ends, or call fp.recover()",
      "MOVE_IN_PROGRESS",
    );
    expect(refusalText(busy, "rollback")).toMatch(
      /Try again in a moment\. If it keeps coming back, a move was interrupted: restarting this MCP server finishes it/,
    );
  });

  it("answers a tool not registered with this server's remedy (--tools MODULE), not the library's", () => {
    const missing = new ConflictError(
      'the move must undo or replay 1 call(s) of tool(s) not registered here with an undo: "note" (note tc_1); register them in openForkpoint({ tools }), or pass { unregistered: "leave" } to leave those calls as they are',
      "TOOL_NOT_REGISTERED",
    );
    expect(refusalText(missing, "rollback")).toBe(
      'TOOL_NOT_REGISTERED: the move must undo or replay 1 call(s) of tool(s) not registered here with an undo: "note" (note tc_1). A person can start this MCP server with --tools MODULE (a module exporting those tools\' definitions, with their undo), then try again.',
    );
  });

  it("tells where a forced move that failed afterwards saved the changed files", () => {
    const failed = Object.assign(new ForkpointError("UNDO_FAILED", "undo of write_file tc_1 failed: disk full"), {
      savedDrift: { checkpointId: "cp_saved", files: ["a.txt"] },
    });
    expect(refusalText(failed, "rollback")).toBe(
      "UNDO_FAILED: undo of write_file tc_1 failed: disk full. The files changed since the last checkpoint were saved in checkpoint cp_saved before this failed.",
    );
  });

  it("is a tool error with text only (nothing a client would validate against the output schema)", () => {
    expect(toolError(new ForkpointError("NOT_FOUND", 'checkpoint not found: "x"'), "diff")).toEqual({
      content: [{ type: "text", text: 'NOT_FOUND: checkpoint not found: "x". list_checkpoints and branches list what exists.' }],
      isError: true,
    });
  });
});
