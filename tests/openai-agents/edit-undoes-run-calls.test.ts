// Pins a defect: the Agents Runner saves a run's input item after its first turn's tool calls have run, so those calls
// come before the input in the session's log. popItem accounts for it, but a forkpoint edit of the input (a chat app's
// "edit message", the CLI's `edit`, the web view) forks just before the input, after the calls: the file the run
// wrote in answer to the old question stays, on the branch of a question that never asked for it.
import { Agent, Runner, tool } from "@openai/agents";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ForkpointSession, undoableAgentTools } from "../../src/openai-agents/index.js";
import { tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";
import { ScriptedModel, functionCall, reply } from "./fake-model.js";

const dbs = tempDatabases();

describe("a forkpoint edit of an Agents run's input", () => {
  it.fails("undoes the tool calls the run made in answer to it", async () => {
    const dir = tempDir();
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const write = tool({
      name: "write_file",
      description: "Write a file",
      parameters: z.object({ path: z.string() }),
      execute: async ({ path }) => (writeFileSync(join(dir, path), "x"), "ok"),
    });
    const model = new ScriptedModel([[functionCall("c1", "write_file", { path: "a.txt" })], [reply("wrote a.txt")]]);
    const undos = { write_file: ({ args }: { args: { path: string } }) => rmSync(join(dir, args.path)) };
    const agent = new Agent({ name: "w", model, tools: undoableAgentTools(s, [write], undos) });
    await new Runner({ tracingDisabled: true }).run(agent, "write a.txt", { session: new ForkpointSession(s) });
    expect(existsSync(join(dir, "a.txt"))).toBe(true);

    const input = (await s.history()).find((m) => m.role === "user")!;
    const edited = await s.edit(input.id, { content: "write nothing" });
    expect(edited.undone.map((t) => t.callId)).toEqual(["c1"]);
    expect(existsSync(join(dir, "a.txt"))).toBe(false);
  });
});
