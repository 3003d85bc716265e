// A model that numbers its tool calls per response (`call_0` in every step) with undoableTools' `after`: each call
// runs; only the same request sent again (an approval POSTed twice) gets a recorded result. After a rollback, a stale
// transcript naming an undone call under a reused id is refused; a fresh one is stored.
import { generateText, isStepCount, tool, type ModelMessage } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConflictError } from "../../src/index.js";
import { loadModelMessages, saveChat, saveModelMessages, undoableTools } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { call, scriptedModel, text } from "./mock-model.js";

const dbs = tempDatabases();

describe("undoableTools with after, when a model reuses tool-call ids", () => {
  const cases = [
    ["in a later step", [[call("call_0", "poll", { k: "a" })], [call("call_0", "poll", { k: "a" })], [text("done")]]],
    ["twice in one step", [[call("call_0", "poll", { k: "a" }), call("call_0", "poll", { k: "a" })], [text("done")]]],
  ] as const;
  for (const [label, steps] of cases) {
    it(`the same id and input ${label} runs again`, async () => {
      const { fp } = dbs.open();
      const s = await fp.createSession({ userId: "u" });
      let runs = 0;
      const tools = { poll: tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => `${k}#${++runs}` }) };
      const asked = await saveChat(s, [{ id: "q", role: "user", parts: [{ type: "text", text: "go" }] }]);
      const result = await generateText({
        model: scriptedModel(steps.map((step) => [...step])),
        tools: undoableTools(s, tools, { poll: () => undefined }, { after: asked.lastMessageId }),
        prompt: "go",
        stopWhen: isStepCount(5),
      });
      const outputs = result.steps.flatMap((st) => st.content.flatMap((c) => (c.type === "tool-result" ? [c.output] : [])));
      expect(runs).toBe(2);
      expect(outputs).toEqual(["a#1", "a#2"]);
      expect((await s.toolTrack()).map((t) => [t.callId, t.status, t.result])).toEqual([
        ["call_0", "succeeded", "a#1"],
        ["call_0", "succeeded", "a#2"],
      ]);
    });
  }
});

describe("saveModelMessages after a rollback, when a model reuses tool-call ids", () => {
  /** Two turns of a loop whose model calls `put` as `call_0` each time, saved after each; a checkpoint between them. */
  async function twoTurns() {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const world = new Set<string>();
    const tools = { put: tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (world.add(k), { ok: k }) }) };
    const undos = { put: ({ args }: { args: { k: string } }) => void world.delete(args.k) };
    const turn = async (messages: ModelMessage[], k: string): Promise<ModelMessage[]> => {
      await saveModelMessages(s, messages);
      const r = await generateText({
        model: scriptedModel([[call("call_0", "put", { k })], [text(`did ${k}`)]]),
        tools: undoableTools(s, tools, undos),
        messages,
        stopWhen: isStepCount(5),
      });
      const all = [...messages, ...r.responseMessages];
      await saveModelMessages(s, all);
      return all;
    };
    const first = await turn([{ role: "user", content: "put a" }], "a");
    const cp = await s.checkpoint({ name: "after turn 1" });
    const second = await turn([...first, { role: "user", content: "put b" }], "b");
    return { s, world, cp, first, second, turn };
  }

  it("a stale transcript holding the undone turn is refused (SESSION_MOVED), nothing written", async () => {
    const { s, world, cp, first, second } = await twoTurns();
    await s.rollback(cp.id);
    expect([...world]).toEqual(["a"]);
    const stale = [...second, { role: "user" as const, content: "put c" }];
    const error = await saveModelMessages(s, stale).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConflictError);
    expect(error).toMatchObject({ code: "SESSION_MOVED" });
    expect(await loadModelMessages(s)).toEqual(first);
    expect((await s.toolTrack()).map((t) => [t.callId, t.args])).toEqual([["call_0", { k: "a" }]]);
  });

  it("a fresh turn after the rollback, its call numbered call_0 again, is stored", async () => {
    const { s, world, cp, first, turn } = await twoTurns();
    await s.rollback(cp.id);
    const loaded = await loadModelMessages(s);
    expect(loaded).toEqual(first);
    const third = await turn([...loaded, { role: "user", content: "put c" }], "c");
    expect(await loadModelMessages(s)).toEqual(third);
    expect([...world]).toEqual(["a", "c"]);
    expect((await s.toolTrack()).map((t) => [t.callId, t.args])).toEqual([
      ["call_0", { k: "a" }],
      ["call_0", { k: "c" }],
    ]);
  });
});
