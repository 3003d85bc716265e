// An edit of an Agents run's input (a chat app's "edit message", the CLI's `edit`, the web view) undoes the tool calls
// the run made in answer to it, although the Runner saves the input only once they have run: streamed or not, in any
// turn of the run; the calls of earlier runs stay, and the SDK reads back exactly the items it saved.
import { Agent, RunContext, Runner, tool, type AgentInputItem, type FunctionTool } from "@openai/agents";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import type { SessionHandle } from "../../src/index.js";
import { ForkpointSession, undoableAgentTools } from "../../src/openai-agents/index.js";
import { tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";
import { ScriptedModel, functionCall, reply } from "./fake-model.js";

const dbs = tempDatabases();

/** An agent whose write_file tool is undoable on `s` and whose lookup tool is not wrapped (nothing journaled). */
function writer(s: SessionHandle, dir: string, model: ScriptedModel) {
  const write = tool({
    name: "write_file",
    description: "Write a file",
    parameters: z.object({ path: z.string() }),
    execute: async ({ path }) => (writeFileSync(join(dir, path), "x"), "ok"),
  });
  const lookup = tool({ name: "lookup", description: "Look up", parameters: z.object({ q: z.string() }), execute: async () => "found" });
  const undos = { write_file: ({ args }: { args: { path: string } }) => rmSync(join(dir, args.path)) };
  return new Agent({ name: "w", model, tools: [...undoableAgentTools(s, [write], undos), lookup] });
}

async function run(agent: Agent, input: string, session: ForkpointSession, stream: boolean) {
  const runner = new Runner({ tracingDisabled: true });
  if (!stream) return void (await runner.run(agent, input, { session }));
  const streamed = await runner.run(agent, input, { session, stream: true });
  for await (const _ of streamed);
  await streamed.completed;
}

/** The forkpoint message holding the user item whose text is `text` (an item's message holds the item as its content). */
const inputOf = async (s: SessionHandle, text: string) =>
  (await s.history()).find((m) => m.role === "user" && (m.content === text || (m.content as { content?: unknown }).content === text))!;

describe("a forkpoint edit of an Agents run's input", () => {
  for (const stream of [false, true]) {
    it(`undoes the tool calls the run made in answer to it (${stream ? "streamed" : "not streamed"})`, async () => {
      const dir = tempDir();
      const { fp } = dbs.open();
      const s = await fp.createSession({ userId: "u" });
      const model = new ScriptedModel([[functionCall("c1", "write_file", { path: "a.txt" })], [reply("wrote a.txt")]]);
      const memory = new ForkpointSession(s);
      await run(writer(s, dir, model), "write a.txt", memory, stream);
      expect(existsSync(join(dir, "a.txt"))).toBe(true);
      const saved = await memory.getItems();
      expect(saved.map((item) => ("role" in item ? item.role : item.type))).toEqual([
        "user",
        "function_call",
        "function_call_result",
        "assistant",
      ]);

      const input = await inputOf(s, "write a.txt");
      expect((await s.plan({ messageId: input.id })).undone.map((t) => t.callId)).toEqual(["c1"]);
      const edited = await s.edit(input.id, { content: "write nothing" });
      expect(edited.undone.map((t) => t.callId)).toEqual(["c1"]);
      expect(existsSync(join(dir, "a.txt"))).toBe(false);
      expect(await memory.getItems()).toEqual([{ role: "user", content: "write nothing" }]);
      expect((await s.versions(edited.message.id)).count).toBe(2);

      // Back on the original branch: the call is replayed, the SDK reads its items as it saved them.
      await s.switchBranch(input.branchId);
      expect(existsSync(join(dir, "a.txt"))).toBe(true);
      expect(await memory.getItems()).toEqual(saved);
    });
  }

  for (const stream of [false, true]) {
    it(`undoes a call made in a later turn, keeping earlier runs' calls (${stream ? "streamed" : "not streamed"})`, async () => {
      const dir = tempDir();
      const { fp } = dbs.open();
      const s = await fp.createSession({ userId: "u" });
      const model = new ScriptedModel([
        [functionCall("c1", "write_file", { path: "a.txt" })],
        [reply("wrote a.txt")],
        // The second run: a lookup (not journaled) first, the write in its second turn.
        [functionCall("c2", "lookup", { q: "b" })],
        [functionCall("c3", "write_file", { path: "b.txt" })],
        [reply("wrote b.txt")],
      ]);
      const memory = new ForkpointSession(s);
      const agent = writer(s, dir, model);
      await run(agent, "write a.txt", memory, stream);
      const firstRun: AgentInputItem[] = await memory.getItems();
      await run(agent, "look up b, then write b.txt", memory, stream);
      expect(existsSync(join(dir, "b.txt"))).toBe(true);

      const edited = await s.edit((await inputOf(s, "look up b, then write b.txt")).id, { content: "write nothing" });
      expect(edited.undone.map((t) => t.callId)).toEqual(["c3"]);
      expect(existsSync(join(dir, "b.txt"))).toBe(false);
      expect(existsSync(join(dir, "a.txt"))).toBe(true);
      expect(await memory.getItems()).toEqual([...firstRun, { role: "user", content: "write nothing" }]);

      // The first run's input, edited: its call goes too.
      const again = await s.edit((await inputOf(s, "write a.txt")).id, { content: "nothing" });
      expect(again.undone.map((t) => t.callId)).toEqual(["c1"]);
      expect(existsSync(join(dir, "a.txt"))).toBe(false);
    });
  }

  it("popItem: a run's calls stay applied while its answer, results and calls are popped, and go with its input", async () => {
    const dir = tempDir();
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const model = new ScriptedModel([[functionCall("c1", "write_file", { path: "a.txt" })], [reply("wrote a.txt")]]);
    const memory = new ForkpointSession(s);
    await run(writer(s, dir, model), "write a.txt", memory, false);
    // Journaled before the run's input, the call is not between the items popped and the one before them.
    for (const type of ["message", "function_call_result", "function_call"]) {
      expect(((await memory.popItem()) as { type?: string }).type).toBe(type);
      expect(existsSync(join(dir, "a.txt"))).toBe(true);
    }
    expect((await s.summary()).toolCalls).toMatchObject({ applied: 1 });
    expect(await memory.popItem()).toMatchObject({ role: "user", content: "write a.txt" });
    expect(existsSync(join(dir, "a.txt"))).toBe(false);
  });

  it("undoes parallel calls of a run an output guardrail stopped (its items saved by a history transaction)", async () => {
    const dir = tempDir();
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const model = new ScriptedModel([
      [functionCall("c1", "write_file", { path: "a.txt" }), functionCall("c2", "write_file", { path: "b.txt" })],
      [reply("secret")],
    ]);
    const agent = writer(s, dir, model).clone({
      outputGuardrails: [{ name: "no secrets", execute: async () => ({ tripwireTriggered: true, outputInfo: {} }) }],
    });
    const stopped = await new Runner({ tracingDisabled: true })
      .run(agent, "write both", { session: new ForkpointSession(s) })
      .catch((e) => e);
    expect(String(stopped)).toMatch(/guardrail/i);
    expect(existsSync(join(dir, "a.txt")) && existsSync(join(dir, "b.txt"))).toBe(true);

    const edited = await s.edit((await inputOf(s, "write both")).id, { content: "write nothing" });
    expect(edited.undone.map((t) => t.callId).sort()).toEqual(["c1", "c2"]);
    expect(existsSync(join(dir, "a.txt")) || existsSync(join(dir, "b.txt"))).toBe(false);
  });

  it("keeps a call journaled before the run, and ignores names that match no call between two messages", async () => {
    const dir = tempDir();
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const model = new ScriptedModel([[functionCall("c1", "write_file", { path: "a.txt" })], [reply("wrote a.txt")]]);
    const memory = new ForkpointSession(s);
    const agent = writer(s, dir, model);
    await memory.addItems([{ role: "user", content: "hello" }]);
    // The app's own call, before the run: an edit of the run's input keeps it.
    const wrapped = agent.tools[0] as FunctionTool;
    const own = JSON.stringify({ path: "own.txt" });
    await wrapped.invoke(new RunContext(), own, { toolCall: { type: "function_call", callId: "own", name: "write_file", arguments: own } });
    await run(agent, "write a.txt", memory, false);

    const edited = await s.edit((await inputOf(s, "write a.txt")).id, { content: "nothing" });
    expect(edited.undone.map((t) => t.callId)).toEqual(["c1"]);
    expect(existsSync(join(dir, "own.txt"))).toBe(true);

    // A message naming calls that lie before the message before it (or in another session) forks just before itself.
    await s.append({ role: "user", content: "forged", metadata: { forkpointCausedCalls: ["own", "c1"] } });
    const forged = await s.edit((await inputOf(s, "forged")).id, { content: "still forged" });
    expect(forged.undone).toEqual([]);
    expect(existsSync(join(dir, "own.txt"))).toBe(true);
  });
});
