// forkpoint/ai with ai@7's tool context: a tool's typed `context` (its contextSchema, the loop's toolsContext) goes
// through undoableTools unchanged, and a move's replay passes the toolsContext given to undoableTools/aiToolDefinitions.
import { generateText, isStepCount, tool } from "ai";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { ToolReplayError, ValidationError, type SessionHandle } from "../../src/index.js";
import { aiToolDefinitions, undoableTools, type AiToolsContext, type AiToolUndos } from "../../src/ai/index.js";
import { makeTempDir, removeDir, tempDatabases } from "../helpers.js";
import { call, scriptedModel, text } from "./mock-model.js";
import { openForkpoint } from "../fixtures/backend.js";

const dbs = tempDatabases();

/** A file tool whose directory and author come from its context; `seen` records what each execute was given. */
function contextTools() {
  const seen: Array<{ toolCallId: string; messages: number; by: string }> = [];
  const tools = {
    write_file: tool({
      inputSchema: z.object({ path: z.string(), text: z.string() }),
      contextSchema: z.object({ root: z.string(), by: z.string() }),
      execute: async ({ path, text }, { toolCallId, messages, context }) => {
        seen.push({ toolCallId, messages: messages.length, by: context.by });
        writeFileSync(join(context.root, path), `${text} by ${context.by}`);
        return { written: path };
      },
    }),
  };
  return { tools, seen };
}

const undosIn = (dir: string): AiToolUndos<ReturnType<typeof contextTools>["tools"]> => ({
  write_file: ({ args }) => rmSync(join(dir, args.path)),
});

/** One generateText loop writing a.txt with the loop's own context; returns the branch it ran on. */
async function loop(s: SessionHandle, tools: ReturnType<typeof contextTools>["tools"], dir: string): Promise<string> {
  await generateText({
    model: scriptedModel([[call("call-a", "write_file", { path: "a.txt", text: "A" })], [text("done")]]),
    tools: undoableTools(s, tools, undosIn(dir), { toolsContext: { write_file: { root: dir, by: "replay" } } }),
    toolsContext: { write_file: { root: dir, by: "loop" } },
    prompt: "write a.txt",
    stopWhen: isStepCount(3),
  });
  return (await s.info()).currentBranchId;
}

/** Compiled, never run: what the types accept and refuse. */
function typeChecks(s: SessionHandle, dir: string) {
  const { tools } = contextTools();
  const wrapped = undoableTools(s, tools, undosIn(dir), { toolsContext: { write_file: { root: dir, by: "me" } } });
  expectTypeOf(wrapped).toEqualTypeOf<typeof tools>();
  expectTypeOf<Parameters<typeof wrapped.write_file.execute>[1]["context"]>().toEqualTypeOf<{ root: string; by: string }>();
  expectTypeOf<AiToolsContext<typeof tools>>().toEqualTypeOf<{ write_file: { root: string; by: string } }>();
  // @ts-expect-error a tool declares a required context: the loop must be given its toolsContext, as without forkpoint
  void generateText({ model: scriptedModel([]), tools: wrapped, prompt: "p" });
  // @ts-expect-error ...and so must undoableTools, for the replays
  undoableTools(s, tools, undosIn(dir));
  // @ts-expect-error a context of another shape than the tool's contextSchema
  undoableTools(s, tools, {}, { toolsContext: { write_file: { root: 1 } } });
  // A function of the replaying session gives it too; a ToolSet without contexts needs no options.
  aiToolDefinitions(tools, {}, { toolsContext: ({ userId }) => ({ write_file: { root: dir, by: userId } }) });
  const plain = { echo: tool({ inputSchema: z.object({ v: z.string() }), execute: async ({ v }) => v }) };
  expectTypeOf(undoableTools(s, plain)).toEqualTypeOf<typeof plain>();
}
void typeChecks;

describe("undoableTools and a tool's typed context", () => {
  it("the loop's calls get the loop's context; a replay gets undoableTools' toolsContext and the recorded toolCallId", async () => {
    const dir = makeTempDir();
    try {
      const { fp } = dbs.open();
      const s = await fp.createSession({ userId: "u" });
      const start = await s.checkpoint();
      const { tools, seen } = contextTools();
      const branch = await loop(s, tools, dir);
      expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("A by loop");
      await s.rollback(start.id);
      expect(existsSync(join(dir, "a.txt"))).toBe(false);
      const back = await s.switchBranch(branch);
      expect(back.replayed.map((t) => t.callId)).toEqual(["call-a"]);
      expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("A by replay");
      // The loop's call had the prompt's messages; the replay has none (no model call is running).
      expect(seen).toEqual([
        { toolCallId: "call-a", messages: 1, by: "loop" },
        { toolCallId: "call-a", messages: 0, by: "replay" },
      ]);
    } finally {
      removeDir(dir);
    }
  });

  it("aiToolDefinitions: a new opener's replay takes its context from a function of the replaying session", async () => {
    const dir = makeTempDir();
    try {
      const path = dbs.path();
      const fp1 = dbs.track(openForkpoint({ path }));
      const s1 = await fp1.createSession({ userId: "alice" });
      const start = await s1.checkpoint();
      const branch = await loop(s1, contextTools().tools, dir);
      await s1.rollback(start.id);
      await fp1.close();

      const { tools, seen } = contextTools();
      const definitions = aiToolDefinitions(tools, undosIn(dir), {
        toolsContext: async ({ userId }) => ({ write_file: { root: dir, by: userId } }),
      });
      const fp2 = dbs.track(openForkpoint({ path, tools: definitions }));
      const s2 = await fp2.getSession(s1.id, { userId: "alice" });
      expect((await s2.switchBranch(branch)).replayed.map((t) => t.callId)).toEqual(["call-a"]);
      expect(seen).toEqual([{ toolCallId: "call-a", messages: 0, by: "alice" }]);
      expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("A by alice");
    } finally {
      removeDir(dir);
    }
  });

  it("a replay whose context the tool's contextSchema refuses fails before the tool runs, naming toolsContext", async () => {
    const dir = makeTempDir();
    try {
      const { fp } = dbs.open();
      const s = await fp.createSession({ userId: "u" });
      const start = await s.checkpoint();
      const { tools, seen } = contextTools();
      const branch = await loop(s, tools, dir);
      await s.rollback(start.id);
      // As JavaScript (or a cast) could: a toolsContext without the tool's entry.
      undoableTools(s, tools, undosIn(dir), { toolsContext: {} as never });
      const refused = await s.switchBranch(branch).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ToolReplayError);
      const cause = (refused as ToolReplayError).cause;
      expect(cause).toBeInstanceOf(ValidationError);
      expect((cause as ValidationError).field).toBe("toolsContext.write_file");
      expect(seen.map((c) => c.by)).toEqual(["loop"]);
      expect(existsSync(join(dir, "a.txt"))).toBe(false);
    } finally {
      removeDir(dir);
    }
  });
});
