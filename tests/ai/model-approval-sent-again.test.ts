// A ModelMessage list ending at a tool message (a tool approval answered, a tool's output) sent again after its request
// went on: no regenerate, nothing forks; the loop's approved call returns its recorded result and its tool runs once.
import { generateText, isStepCount, tool, type ModelMessage } from "ai";
import { expect, it } from "vitest";
import { z } from "zod";
import { loadModelMessages, saveModelMessages, undoableTools } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { call, scriptedModel, text } from "./mock-model.js";

const dbs = tempDatabases();

it("a tool approval sent again as ModelMessages runs the approved call once; the retry's answer goes on a branch of its own", async () => {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  const sent: string[] = [];
  let runs = 0;
  const tools = {
    send: tool({
      inputSchema: z.object({ to: z.string() }),
      needsApproval: true,
      execute: async ({ to }) => (runs++, sent.push(to), `sent to ${to}`),
    }),
  };
  const undos = { send: ({ args }: { args: { to: string } }) => void sent.splice(sent.indexOf(args.to), 1) };
  /** The route: the request's messages saved, the loop's tools `{ after }` them, the whole list saved after them. */
  const request = async (messages: ModelMessage[], steps: Parameters<typeof scriptedModel>[0]) => {
    const { lastMessageId } = await saveModelMessages(s, messages);
    const r = await generateText({
      model: scriptedModel(steps),
      tools: undoableTools(s, tools, undos, { after: lastMessageId! }),
      messages,
      stopWhen: isStepCount(5),
    });
    const all = [...messages, ...r.responseMessages];
    await saveModelMessages(s, all, { after: lastMessageId! });
    return all;
  };
  const asked = await request([{ role: "user", content: "email bob" }], [[call("g1", "send", { to: "bob" })]]);
  const parts = asked.at(-1)!.content as { type: string; approvalId?: string }[];
  const approvalId = parts.find((p) => p.type === "tool-approval-request")!.approvalId!;
  const approved: ModelMessage[] = [...asked, { role: "tool", content: [{ type: "tool-approval-response", approvalId, approved: true }] }];
  const first = await request(approved, [[text("Sent.")]]);
  await request(approved, [[text("Sent, again.")]]);

  expect(runs).toBe(1);
  expect(sent).toEqual(["bob"]);
  expect((await s.toolTrack()).map((t) => [t.callId, t.status, t.applied])).toEqual([["g1", "succeeded", true]]);
  // The first answer stays current; the retry's follows the same approval on a branch of its own (its tool result a
  // version of the first's), holding the call once.
  const history = await s.history({ withVersions: true });
  expect(history.map((m) => m.role)).toEqual(["user", "assistant", "tool", "tool", "assistant"]);
  expect(history[3]!.versions!.count).toBe(2);
  expect(await loadModelMessages(s)).toEqual(first);
  await s.switchBranch((await s.branches()).find((b) => b.id !== history.at(-1)!.branchId)!.id);
  const other = await loadModelMessages(s);
  expect(other.map((m) => m.role)).toEqual(first.map((m) => m.role));
  expect(JSON.stringify(other.at(-1))).toContain("Sent, again.");
  expect(sent).toEqual(["bob"]);
});
