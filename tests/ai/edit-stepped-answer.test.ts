// An edit of an answer saved after each step (`onStepEnd`): the calls the edited answer still shows stay applied, as without step saves.
import { isStepCount, streamText, tool, type UIMessage } from "ai";
import { expect, it } from "vitest";
import { z } from "zod";
import type { SessionHandle } from "../../src/index.js";
import { loadChat, saveChat, undoableTools } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { call, scriptedStreamModel, text } from "./mock-model.js";

const dbs = tempDatabases();

const question: UIMessage = { id: "q", role: "user", parts: [{ type: "text", text: "put them" }] };

type Part = UIMessage["parts"][number];
const put = (id: string, k: string): Part => ({ type: "tool-put", toolCallId: id, state: "output-available", input: { k }, output: k });

/** The answer as `onStepEnd` saves it once the given steps have ended (each step's parts), then its text when done. */
function answer(steps: Part[][], done?: string): UIMessage {
  const parts = steps.flatMap((step) => [{ type: "step-start" as const }, ...step]);
  return {
    id: "a",
    role: "assistant",
    parts: [...parts, ...(done === undefined ? [] : [{ type: "step-start" as const }, { type: "text" as const, text: done }])],
  };
}

/** A question answered in three steps (calls x1, x2, then text), the answer saved after each step and at the end. */
async function answered(s: SessionHandle, world: Set<string>): Promise<void> {
  const asked = await saveChat(s, [question]);
  const after = asked.lastMessageId;
  const steps = [[put("x1", "one")], [put("x2", "two")]];
  const model = scriptedStreamModel(
    [[call("x1", "put", { k: "one" })], [call("x2", "put", { k: "two" })], [text("answer")]],
    async (step) => {
      if (step > 0) await saveChat(s, [question, answer(steps.slice(0, step))], { after });
    },
  );
  const putTool = tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (world.add(k), k) });
  const tools = undoableTools(s, { put: putTool }, { put: ({ args }) => void world.delete(args.k) }, { after });
  const result = streamText({ model, prompt: "put them", tools, stopWhen: isStepCount(5) });
  expect(await result.text).toBe("answer");
  await saveChat(s, [question, answer(steps, "answer")], { after });
}

const shown = async (s: SessionHandle) =>
  (await loadChat(s)).map((m) => m.parts.map((p) => ("toolCallId" in p ? p.toolCallId : p.type === "text" ? p.text : "")).join(""));
const applied = async (s: SessionHandle) => (await s.toolTrack()).filter((t) => t.applied).map((t) => t.callId);

it("an answer saved after each step, its text edited, its tool parts kept: both calls stay applied, and it is < 2/2 >", async () => {
  const { fp } = dbs.open();
  const world = new Set<string>();
  const s = await fp.createSession({ userId: "u" });
  await answered(s, world);
  const [q, a] = await loadChat(s);
  const edited = { ...a!, parts: a!.parts.map((p) => (p.type === "text" ? { ...p, text: "edited" } : p)) };
  const saved = await saveChat(s, [q!, edited]);
  expect(saved.forked).toBe("edit");
  expect(await shown(s)).toEqual(["put them", "x1x2edited"]);
  expect(await applied(s)).toEqual(["x1", "x2"]);
  expect([...world].sort()).toEqual(["one", "two"]);
  const versions = await s.versions(saved.lastMessageId!);
  expect([versions.index, versions.count]).toEqual([1, 2]);
  // The first version keeps them too.
  await s.switchBranch(versions.versions[0]!.branchId);
  expect(await shown(s)).toEqual(["put them", "x1x2answer"]);
  expect(await applied(s)).toEqual(["x1", "x2"]);
  expect([...world].sort()).toEqual(["one", "two"]);
});

it("an answer saved after each step, edited to drop its second call: that call is undone, the first stays", async () => {
  const { fp } = dbs.open();
  const world = new Set<string>();
  const s = await fp.createSession({ userId: "u" });
  await answered(s, world);
  const [q, a] = await loadChat(s);
  const edited = { ...a!, parts: a!.parts.filter((p) => !("toolCallId" in p && p.toolCallId === "x2")) };
  await saveChat(s, [q!, edited]);
  expect(await shown(s)).toEqual(["put them", "x1answer"]);
  expect(await applied(s)).toEqual(["x1"]);
  expect([...world]).toEqual(["one"]);
});
