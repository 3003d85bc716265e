// From the adapters review: a regenerate submitted twice to two app servers at once (two openers of one database). The
// first save forks, undoing the old answer's tool call; the second meets that move under way and waits for it, then finds
// nothing left to do: stored once, no error (as within one process, where the second save waits its turn).
import { tool, type UIMessage } from "ai";
import { expect, it } from "vitest";
import { z } from "zod";
import { aiToolDefinitions, loadChat, saveChat, undoableTools } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

const question: UIMessage = { id: "q1", role: "user", parts: [{ type: "text", text: "note A" }] };

it("the second save waits for the first's fork and writes nothing; the old answer's call is undone once", async () => {
  const world = new Set<string>();
  let undos = 0;
  let undoing!: () => void;
  const undoStarted = new Promise<void>((resolve) => (undoing = resolve));
  let finishUndo!: () => void;
  const undoMayFinish = new Promise<void>((resolve) => (finishUndo = resolve));
  const tools = { note: tool({ inputSchema: z.object({ t: z.string() }), execute: async ({ t }) => (world.add(t), t) }) };
  const undo = {
    note: async ({ args }: { args: { t: string } }) => {
      undos++;
      undoing();
      await undoMayFinish;
      world.delete(args.t);
    },
  };
  const one = dbs.open({ tools: aiToolDefinitions(tools, undo) });
  const two = dbs.open({ path: one.path, tools: aiToolDefinitions(tools, undo) });
  const s = await one.fp.createSession({ userId: "u" });
  const asked = await saveChat(s, [question]);
  const wrapped = undoableTools(s, tools, undo, { after: asked.lastMessageId });
  await wrapped.note!.execute!({ t: "A" }, { toolCallId: "c1", messages: [], context: {} });
  const answer = {
    id: "a1",
    role: "assistant",
    parts: [
      { type: "tool-note", toolCallId: "c1", state: "output-available", input: { t: "A" }, output: "A" },
      { type: "text", text: "noted" },
    ],
  } as UIMessage;
  await saveChat(s, [question, answer], { after: asked.lastMessageId });

  // The regenerate's save, from both servers: the first is undoing the old answer's call when the second reads.
  const first = saveChat(s, [question]);
  await undoStarted;
  const second = saveChat(await two.fp.getSession(s.id, { userId: "u" }), [question]);
  // Given time to meet the move under way (it used to be refused MOVE_IN_PROGRESS there) before the move ends.
  await new Promise((resolve) => setTimeout(resolve, 300));
  finishUndo();
  const [a, b] = await Promise.all([first, second]);
  expect([a.forked, b.forked]).toEqual(["truncate", null]);
  expect(b).toMatchObject({ appended: 0, lastMessageId: asked.lastMessageId, branchId: a.branchId });
  expect(await s.branches()).toHaveLength(2);
  expect(undos).toBe(1);
  expect([...world]).toEqual([]);
  expect(await loadChat(s)).toEqual([question]);
});
