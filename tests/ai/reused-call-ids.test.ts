// A model that numbers its tool calls per response (`call_0` in every step) with undoableTools' `after`: each call
// runs; only the same request sent again (an approval POSTed twice) gets a recorded result.
import { generateText, isStepCount, tool } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { saveChat, undoableTools } from "../../src/ai/index.js";
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
