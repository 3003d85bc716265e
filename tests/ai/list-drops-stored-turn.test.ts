// A list that changes a message and goes on with messages stored after it (a turn deleted from the middle of the chat, a
// message put before stored ones): refused, nothing written. Taken for an edit, it forked before the changed message,
// undoing the later turns' calls, and appended their copies showing those calls as done.
import { generateText, isStepCount, tool, type ModelMessage, type UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ValidationError, type SessionHandle } from "../../src/index.js";
import { loadChat, loadModelMessages, saveModelMessages, undoableTools } from "../../src/ai/index.js";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { guideRoute as route, user } from "./guide-route.js";
import { call, scriptedModel, scriptedStreamModel, text } from "./mock-model.js";

const dbs = tempDatabases();

/** What a refused save must leave as it was: the chat, the branches, the applied calls and the world. */
async function snapshot(s: SessionHandle, world: Set<string>) {
  return {
    history: (await s.history()).map((m) => m.id),
    branches: (await s.branches()).length,
    applied: (await s.toolTrack()).filter((t) => t.applied).map((t) => t.callId),
    world: [...world].sort(),
  };
}

describe("a chat list that drops or moves stored messages", () => {
  for (const steps of [false, true]) {
    const how = steps ? "saved after each step" : "saved at the end";
    /** Three turns, each answer calling `put` once (c1, c2, c3). */
    async function threeTurns() {
      const { fp } = dbs.open();
      const world = new Set<string>();
      const s = await fp.createSession({ userId: "u" });
      const turn = async (id: string, n: number) =>
        route(
          s,
          world,
          [...(await loadChat(s)), user(id, `turn ${n}`)],
          scriptedStreamModel([[call(`c${n}`, "put", { k: `k${n}` })], [text(`did ${n}`)]]),
          steps,
        );
      await turn("q1", 1);
      await turn("q2", 2);
      await turn("q3", 3);
      return { s, world, chat: await loadChat(s) };
    }

    it(`a middle turn dropped, then a question: refused, nothing written (${how})`, async () => {
      const { s, world, chat } = await threeTurns();
      const before = await snapshot(s, world);
      const dropped: UIMessage[] = [...chat.slice(0, 2), ...chat.slice(4), user("q4", "turn 4")];
      const error = await rejectionOf(route(s, world, dropped, scriptedStreamModel([[text("did 4")]]), steps));
      expect(error).toBeInstanceOf(ValidationError);
      expect(error.message).toContain('message "q3"');
      expect(await snapshot(s, world)).toEqual(before);
      expect(before.applied).toEqual(["c1", "c2", "c3"]);
    });

    it(`a message put before stored ones: refused, nothing written (${how})`, async () => {
      const { s, world, chat } = await threeTurns();
      const before = await snapshot(s, world);
      const inserted: UIMessage[] = [...chat.slice(0, 2), user("x", "inserted"), ...chat.slice(2)];
      const error = await rejectionOf(route(s, world, inserted, scriptedStreamModel([[text("more")]]), steps));
      expect(error).toBeInstanceOf(ValidationError);
      expect(await snapshot(s, world)).toEqual(before);
    });
  }

  it("an edit of the last question, and a regenerate, still fork as before", async () => {
    const { fp } = dbs.open();
    const world = new Set<string>();
    const s = await fp.createSession({ userId: "u" });
    await route(s, world, [user("q1", "one")], scriptedStreamModel([[call("c1", "put", { k: "k1" })], [text("did 1")]]));
    const chat = await loadChat(s);
    await route(s, world, [user("q1", "one, edited")], scriptedStreamModel([[call("c2", "put", { k: "k2" })], [text("did 2")]]));
    await route(s, world, chat.slice(0, 1), scriptedStreamModel([[call("c3", "put", { k: "k3" })], [text("did 3")]]));
    expect([...world]).toEqual(["k3"]);
    expect(await s.branches()).toHaveLength(3);
  });
});

describe("a ModelMessage list that drops a stored turn", () => {
  it("is refused by the later turn's tool call, nothing written", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const world = new Set<string>();
    const tools = { put: tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (world.add(k), { ok: k }) }) };
    const undos = { put: ({ args }: { args: { k: string } }) => void world.delete(args.k) };
    const turns: ModelMessage[][] = [];
    let messages: ModelMessage[] = [];
    for (const k of ["a", "b", "c"]) {
      const asked: ModelMessage[] = [...messages, { role: "user", content: `put ${k}` }];
      await saveModelMessages(s, asked);
      const r = await generateText({
        model: scriptedModel([[call(`call-${k}`, "put", { k })], [text(`did ${k}`)]]),
        tools: undoableTools(s, tools, undos),
        messages: asked,
        stopWhen: isStepCount(5),
      });
      turns.push([asked.at(-1)!, ...r.responseMessages]);
      messages = [...asked, ...r.responseMessages];
      await saveModelMessages(s, messages);
    }
    const before = await snapshot(s, world);
    const dropped = [...turns[0]!, ...turns[2]!.slice(1), { role: "user" as const, content: "put d" }];
    // The user message of turn c is plain text (no id, no call): the first message naming a stored call is refused.
    const withC = [...turns[0]!, ...turns[2]!, { role: "user" as const, content: "put d" }];
    for (const list of [dropped, withC]) {
      const error = await rejectionOf(saveModelMessages(s, list));
      expect(error).toBeInstanceOf(ValidationError);
      expect(error.message).toContain('"call-c"');
    }
    expect(await snapshot(s, world)).toEqual(before);
    expect(await loadModelMessages(s)).toEqual(messages);
  });
});
