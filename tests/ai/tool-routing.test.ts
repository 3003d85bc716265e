// forkpoint/ai tool routing: each session's moves run the functions bound for that session (or those given to
// openForkpoint), never another session's.
import { generateText, isStepCount, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ToolUndoError } from "../../src/index.js";
import { aiToolDefinitions, undoableTools } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { call, scriptedModel, text } from "./mock-model.js";
import { openForkpoint } from "../fixtures/backend.js";

const dbs = tempDatabases();

/** The same tool, as one app's closure over `owner`: each execute and undo is logged with the owner it belongs to. */
function ownedTools(owner: string, log: string[]) {
  const tools = {
    put: tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (log.push(`${owner} put ${k}`), "ok") }),
  };
  const undos = { put: async ({ args }: { args: { k: string } }) => void log.push(`${owner} undo ${args.k}`) };
  return { tools, undos };
}

/** Session C's call made by a first process, which then closes; returns what a second opener needs. */
async function callInEarlierProcess(log: string[]) {
  const path = dbs.path();
  const fp1 = dbs.track(openForkpoint({ path }));
  const c = await fp1.createSession({ userId: "u" });
  const cp = await c.checkpoint();
  const { tools, undos } = ownedTools("C", log);
  await generateText({
    model: scriptedModel([[call("kc", "put", { k: "c" })], [text("ok")]]),
    tools: undoableTools(c, tools, undos),
    prompt: "go",
    stopWhen: isStepCount(3),
  });
  await fp1.close();
  return { path, sessionId: c.id, checkpointId: cp.id };
}

describe("undoableTools routing across sessions", () => {
  it("a session bound in no undoableTools call here is moved with openForkpoint's definitions, not the latest session's", async () => {
    const log: string[] = [];
    const earlier = await callInEarlierProcess(log);
    const general = ownedTools("open", log);
    const fp2 = dbs.track(openForkpoint({ path: earlier.path, tools: aiToolDefinitions(general.tools, general.undos) }));
    // Two other sessions of this process bind their own closures (per request, as a route handler does).
    for (const owner of ["A", "B"]) {
      const own = ownedTools(owner, log);
      undoableTools(await fp2.createSession({ userId: "u" }), own.tools, own.undos);
    }
    const c = await fp2.getSession(earlier.sessionId, { userId: "u" });
    const r = await c.rollback(earlier.checkpointId);
    expect(r.undone.map((t) => t.callId)).toEqual(["kc"]);
    expect(log).toEqual(["C put c", "open undo c"]);
  });

  it("without openForkpoint's definitions, such a move is refused and no other session's function runs", async () => {
    const log: string[] = [];
    const earlier = await callInEarlierProcess(log);
    const fp2 = dbs.track(openForkpoint({ path: earlier.path }));
    const a = ownedTools("A", log);
    undoableTools(await fp2.createSession({ userId: "u" }), a.tools, a.undos);
    const c = await fp2.getSession(earlier.sessionId, { userId: "u" });
    const refused = await c.rollback(earlier.checkpointId).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ToolUndoError);
    expect(((refused as ToolUndoError).cause as { code?: string }).code).toBe("TOOL_NOT_REGISTERED");
    expect(log).toEqual(["C put c"]);
    // Once C's own tools are bound, the same rollback goes through with them.
    const own = ownedTools("C", log);
    undoableTools(c, own.tools, own.undos);
    expect((await c.rollback(earlier.checkpointId)).undone.map((t) => t.callId)).toEqual(["kc"]);
    expect(log).toEqual(["C put c", "C undo c"]);
  });
});
