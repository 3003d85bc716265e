// A run whose model compacts the conversation (a `compaction` item): the Runner replaces the session's history with
// it, and the tool calls made before it stay applied (a compaction is no rollback).
import { Agent, Runner, tool, type AgentInputItem } from "@openai/agents";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { z } from "zod";
import { ForkpointSession, undoableAgentTools } from "../../src/openai-agents/index.js";
import { makeTempDir, removeDir, tempDatabases } from "../helpers.js";
import { ScriptedModel, functionCall, reply } from "./fake-model.js";

const dbs = tempDatabases();
const dirs: string[] = [];
afterEach(() => dirs.splice(0).forEach(removeDir));

it("a compaction item replaces the history the Runner reads, on the same branch, without undoing earlier calls", async () => {
  const dir = makeTempDir();
  dirs.push(dir);
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  const memory = new ForkpointSession(s);
  const write = tool({
    name: "write_file",
    description: "Write a file",
    parameters: z.object({ path: z.string() }),
    execute: async ({ path }) => (writeFileSync(join(dir, path), "x"), "ok"),
  });
  const compaction: AgentInputItem = { type: "compaction", encrypted_content: "summary-of-before" };
  const model = new ScriptedModel([
    [functionCall("c1", "write_file", { path: "a.txt" })],
    [reply("wrote a.txt")],
    [compaction, reply("compacted")],
    [reply("still here")],
  ]);
  const agent = new Agent({
    name: "w",
    model,
    tools: undoableAgentTools(s, [write], { write_file: ({ args }) => rmSync(join(dir, args.path)) }),
  });
  const runner = new Runner({ tracingDisabled: true });
  await runner.run(agent, "write a.txt", { session: memory });
  expect((await runner.run(agent, "go on", { session: memory })).finalOutput).toBe("compacted");
  expect(existsSync(join(dir, "a.txt"))).toBe(true);
  expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["c1"]);
  expect(await s.branches()).toHaveLength(1);
  // The next run's model input starts at the compaction item.
  await runner.run(agent, "and now?", { session: memory });
  expect(model.requests[3]!.input).toMatchObject([compaction, { role: "assistant" }, { role: "user", content: "and now?" }]);
});
