// An Agents run whose input has several items (`run(agent, [context, question], { session })`): an edit of any of its
// input items (not only the first) undoes every call the run made, keeping the input items before it, or is refused
// (RUN_INTERLEAVED) as an edit of the first is; pops of its items undo the calls once they reach its first item.
import { Agent, Runner, tool, type AgentInputItem } from "@openai/agents";
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

/** An agent whose write_file tool is undoable on `s`. */
function writer(s: SessionHandle, dir: string, model: ScriptedModel) {
  const write = tool({
    name: "write_file",
    description: "Write a file",
    parameters: z.object({ path: z.string() }),
    execute: async ({ path }) => (writeFileSync(join(dir, path), "x"), "ok"),
  });
  const undos = { write_file: ({ args }: { args: { path: string } }) => rmSync(join(dir, args.path)) };
  return new Agent({ name: "w", model, tools: undoableAgentTools(s, [write], undos) });
}

async function run(agent: Agent, input: AgentInputItem[], session: ForkpointSession, stream: boolean) {
  const runner = new Runner({ tracingDisabled: true });
  if (!stream) return void (await runner.run(agent, input, { session }));
  const streamed = await runner.run(agent, input, { session, stream: true });
  for await (const _ of streamed);
  await streamed.completed;
}

const user = (content: string): AgentInputItem => ({ role: "user", content });
const INPUT = [user("context: files"), user("context: be brief"), user("write a.txt and b.txt")];

/** The forkpoint message holding the user item whose text is `text`. */
const inputOf = async (s: SessionHandle, text: string) =>
  (await s.history()).find((m) => m.role === "user" && (m.content as { content?: unknown }).content === text)!;

const brief = async (memory: ForkpointSession) =>
  (await memory.getItems()).map((i) => ("role" in i ? `${i.role}:${typeof i.content === "string" ? i.content : ".."}` : i.type));

/** A run of INPUT that writes a.txt in its first turn (after saying so) and b.txt in its second. */
async function ranWithInput(stream: boolean, beforeTurn?: (turn: number) => Promise<void>) {
  const dir = tempDir();
  const { fp, path } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  const model = new ScriptedModel(
    [
      [reply("writing a.txt"), functionCall("c1", "write_file", { path: "a.txt" })],
      [functionCall("c2", "write_file", { path: "b.txt" })],
      [reply("wrote both")],
    ],
    beforeTurn && ((turn) => beforeTurn(turn)),
  );
  const memory = new ForkpointSession(s);
  return { dir, fp, path, s, memory, agent: writer(s, dir, model) };
}

const files = (dir: string) => ["a.txt", "b.txt"].filter((f) => existsSync(join(dir, f)));

describe("an edit of a later input item of an Agents run", () => {
  for (const stream of [false, true]) {
    const mode = stream ? "streamed" : "not streamed";
    for (const [which, kept] of [
      ["the last", 2],
      ["the second", 1],
    ] as const) {
      it(`${which} input item: undoes all the run's calls, keeps the input items before it (${mode})`, async () => {
        const { dir, s, memory, agent } = await ranWithInput(stream);
        await run(agent, INPUT, memory, stream);
        expect(files(dir)).toEqual(["a.txt", "b.txt"]);
        const saved = await memory.getItems();
        expect(await brief(memory)).toEqual([
          "user:context: files",
          "user:context: be brief",
          "user:write a.txt and b.txt",
          "assistant:..",
          "function_call",
          "function_call_result",
          "function_call",
          "function_call_result",
          "assistant:..",
        ]);

        const target = await inputOf(s, (INPUT[kept] as { content: string }).content);
        expect((await s.plan({ messageId: target.id })).undone.map((t) => t.callId)).toEqual(["c2", "c1"]);
        const edited = await s.edit(target.id, { content: "write nothing" });
        expect(edited.undone.map((t) => t.callId)).toEqual(["c2", "c1"]);
        expect(files(dir)).toEqual([]);
        expect(await memory.getItems()).toEqual([...INPUT.slice(0, kept), user("write nothing")]);
        expect(edited.message.id).toBe((await s.history()).at(-1)!.id);
        // Undone and redone, the edit comes back whole (its copies and new version).
        await s.undo();
        expect(files(dir)).toEqual(["a.txt", "b.txt"]);
        expect(await memory.getItems()).toEqual(saved);
        await s.redo();
        expect(files(dir)).toEqual([]);
        expect(await memory.getItems()).toEqual([...INPUT.slice(0, kept), user("write nothing")]);

        // Back on the run's branch: its calls are replayed, its items read as saved.
        await s.switchBranch(target.branchId);
        expect(files(dir)).toEqual(["a.txt", "b.txt"]);
        expect(await memory.getItems()).toEqual(saved);

        // The new branch's input items are one run's input still: an edit of the first of them changes no call.
        await s.switchBranch(edited.branch.id);
        const again = await s.edit((await inputOf(s, "context: files")).id, { content: "context: none" });
        expect(again.undone).toEqual([]);
        expect(await memory.getItems()).toEqual([user("context: none")]);
      });
    }

    it(`what the model said before its first call: its edit undoes the calls too (${mode})`, async () => {
      const { dir, s, memory, agent } = await ranWithInput(stream);
      await run(agent, INPUT, memory, stream);
      const said = (await s.history()).find((m) => m.role === "assistant")!;
      const edited = await s.edit(said.id, { content: { role: "assistant", content: "nothing to write" } });
      expect(edited.undone.map((t) => t.callId)).toEqual(["c2", "c1"]);
      expect(files(dir)).toEqual([]);
      expect((await brief(memory)).slice(0, 3)).toEqual(["user:context: files", "user:context: be brief", "user:write a.txt and b.txt"]);
    });
  }

  it("popItem: the calls stay applied until the pops reach the run's first input item", async () => {
    const { dir, memory, agent } = await ranWithInput(false);
    await run(agent, INPUT, memory, false);
    for (let i = 0; i < 8; i++) {
      await memory.popItem();
      expect(files(dir)).toEqual(["a.txt", "b.txt"]);
    }
    expect(await memory.getItems()).toEqual([INPUT[0]]);
    expect(await memory.popItem()).toEqual(INPUT[0]);
    expect(files(dir)).toEqual([]);
  });

  for (const stream of [false, true]) {
    it(`another handle's message between the run's calls: an edit of any input item is refused (${stream ? "streamed" : "not streamed"})`, async () => {
      let other: SessionHandle | undefined;
      const { dir, s, memory, agent, path } = await ranWithInput(stream, async (turn) => {
        if (turn === 1) await new ForkpointSession(other!).addItems([user("interjection")]);
      });
      other = await dbs.open({ path }).fp.getSession(s.id, { userId: "u" });
      await run(agent, INPUT, memory, stream);
      expect((await brief(memory)).slice(0, 2)).toEqual(["user:interjection", "user:context: files"]);
      const before = { items: await brief(memory), branches: (await s.branches()).length };

      for (const item of INPUT) {
        const target = await inputOf(s, (item as { content: string }).content);
        await expect(s.edit(target.id, { content: "edited" })).rejects.toMatchObject({ name: "ConflictError", code: "RUN_INTERLEAVED" });
        await expect(s.plan({ messageId: target.id })).rejects.toMatchObject({ code: "RUN_INTERLEAVED" });
      }
      expect({ items: await brief(memory), branches: (await s.branches()).length }).toEqual(before);
      expect(files(dir)).toEqual(["a.txt", "b.txt"]);

      // Pops of the later input items leave the calls applied (the first stays); the first's is refused.
      for (let i = 0; i < 8; i++) await memory.popItem();
      expect(files(dir)).toEqual(["a.txt", "b.txt"]);
      await expect(memory.popItem()).rejects.toMatchObject({ code: "RUN_INTERLEAVED" });
      expect(await brief(memory)).toEqual(["user:interjection", "user:context: files"]);
    });
  }
});
