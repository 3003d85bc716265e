// docs/ai-sdk.md's route answering one question twice at once (a double submit, of a question or of a regenerate), the
// model numbering its calls per response (`call_0` in every step) and the two requests' models calling with other
// inputs: each answer's branch holds its own calls, told from the other request's by their inputs.
import { convertToModelMessages, createIdGenerator, isStepCount, streamText, tool, type LanguageModel, type UIMessage } from "ai";
import { expect, it } from "vitest";
import { z } from "zod";
import type { SessionHandle } from "../../src/index.js";
import { loadChat, saveChat, undoableTools } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { call, scriptedStreamModel, text } from "./mock-model.js";

const dbs = tempDatabases();

const user = (id: string, t: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text: t }] });
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** The guide's route: saveChat before the loop, `put` wrapped `{ after }` its question, the answer saved in `onEnd` (and `onStepEnd`). */
async function route(s: SessionHandle, world: Set<string>, messages: UIMessage[], model: LanguageModel, steps: boolean): Promise<void> {
  const asked = await saveChat(s, messages);
  const after = asked.lastMessageId;
  const put = tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (world.add(k), k) });
  const result = streamText({
    model,
    messages: await convertToModelMessages(messages),
    tools: undoableTools(s, { put }, { put: ({ args }) => void world.delete(args.k) }, { after }),
    stopWhen: isStepCount(6),
  });
  let saved!: Promise<unknown>;
  const ended = new Promise<void>((resolve) => {
    const response = result.toUIMessageStreamResponse({
      originalMessages: messages,
      generateMessageId: createIdGenerator({ prefix: "msg", size: 16 }),
      ...(steps ? { onStepEnd: async ({ messages: all }) => void (await saveChat(s, all, { after })) } : {}),
      onEnd: async ({ messages: all }) => {
        saved = saveChat(s, all, { after });
        await saved.finally(resolve);
      },
    });
    void response.text();
  });
  await ended;
  await saved;
}

/** A model calling `put` with `k`, then with `k`b, each call numbered `call_0`, then answering. */
const model = (k: string, wait: number) =>
  scriptedStreamModel([[call("call_0", "put", { k })], [call("call_0", "put", { k: `${k}b` })], [text(`${k} done`)]], () => pause(wait));

/** For each branch, once switched to: the inputs of the calls its chat shows done, of those its track holds applied, and the world. */
async function eachBranch(s: SessionHandle, world: Set<string>) {
  const out: { shown: string[]; applied: string[]; world: string[] }[] = [];
  for (const b of await s.branches()) {
    await s.switchBranch(b.id);
    const shown = (await loadChat(s)).flatMap((m) =>
      m.parts.flatMap((p) => (p.type === "tool-put" && p.state === "output-available" ? [(p.input as { k: string }).k] : [])),
    );
    const applied = (await s.toolTrack()).filter((t) => t.applied).map((t) => (t.args as { k: string }).k);
    out.push({ shown: shown.sort(), applied: applied.sort(), world: [...world].sort() });
  }
  return out;
}

for (const steps of [false, true]) {
  for (const regenerate of [false, true]) {
    const saves = steps ? "saved after each step" : "saved at the end";
    const what = regenerate ? "a regenerate" : "a question";
    it(`${what} POSTed twice at once, every call numbered call_0: each answer's branch holds its own calls (${saves})`, async () => {
      const { fp } = dbs.open();
      const world = new Set<string>();
      const s = await fp.createSession({ userId: "u" });
      await route(s, world, [user("q1", "one")], scriptedStreamModel([[call("call_0", "put", { k: "z" })], [text("ok")]]), false);
      const before = await loadChat(s);
      const asked = [...before, user("q2", "two")];
      if (regenerate) await route(s, world, asked, scriptedStreamModel([[call("call_0", "put", { k: "o" })], [text("old")]]), false);
      const body = JSON.stringify(asked);
      await Promise.all([
        route(s, world, JSON.parse(body) as UIMessage[], model("p", 10), steps),
        route(s, world, JSON.parse(body) as UIMessage[], model("r", 15), steps),
      ]);
      const seen = await eachBranch(s, world);
      for (const b of seen) {
        expect(b.applied).toEqual(b.shown);
        expect(b.world).toEqual(b.shown);
      }
      const answers = [["p", "pb", "z"], ["r", "rb", "z"], ...(regenerate ? [["o", "z"]] : [])];
      expect(seen.map((b) => b.shown.join(",")).sort()).toEqual(answers.map((a) => a.join(",")).sort());
    });
  }
}
