// The guide's route with `at: { branchId, head }`: a tab that missed another tab's turn on the same branch is refused
// (with the branch alone, its question reads as an edit of the other tab's and forks over it, undoing its calls).
import { convertToModelMessages, createIdGenerator, isStepCount, streamText, tool, type UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConflictError, type Forkpoint, type IfAt } from "../../src/index.js";
import { loadChat, saveChat, undoableTools } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { call, scriptedStreamModel, text } from "./mock-model.js";

const dbs = tempDatabases();
const q = (id: string, t: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text: t }] });

async function twoTabs(fp: Forkpoint, withHead: boolean) {
  const s = await fp.createSession({ userId: "u" });
  const world = new Set<string>();
  const put = tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (world.add(k), k) });
  const model = scriptedStreamModel([[text("a1")], [call("c-A", "put", { k: "fromA" })], [text("put fromA")], [text("a3")]]);
  const post = async (messages: UIMessage[], at?: IfAt): Promise<number> => {
    let asked;
    try {
      asked = await saveChat(s, messages, at ? { ifAt: at } : {});
    } catch (e) {
      if (e instanceof ConflictError && e.code === "SESSION_MOVED") return 409;
      throw e;
    }
    const result = streamText({
      model,
      messages: await convertToModelMessages(messages),
      tools: undoableTools(s, { put }, { put: ({ args }) => void world.delete(args.k) }, { after: asked.lastMessageId }),
      stopWhen: isStepCount(5),
    });
    await result
      .toUIMessageStreamResponse({
        originalMessages: messages,
        generateMessageId: createIdGenerator({ prefix: "msg", size: 16 }),
        onEnd: async ({ messages: all }) => void (await saveChat(s, all, { after: asked.lastMessageId })),
      })
      .text();
    return 200;
  };
  // The guide's GET: where the chat is (its head read before the messages), and the messages.
  const load = async () => {
    const { currentBranchId: branchId, position: head } = await s.summary();
    return { messages: await loadChat(s), at: withHead ? { branchId, head } : { branchId } };
  };
  expect(await post([q("q1", "hi")])).toBe(200);
  const tabA = await load();
  const tabB = await load();
  expect(await post([...tabA.messages, q("q2", "put fromA")], tabA.at)).toBe(200);
  expect([...world]).toEqual(["fromA"]);
  const statusB = await post([...tabB.messages, q("q3", "other")], tabB.at);
  return { s, world, statusB };
}

describe("two tabs on one branch, the guide's route", () => {
  it("with the head the page shows, a tab that missed the other's turn is refused; its call stays", async () => {
    const { fp } = dbs.open();
    const { s, world, statusB } = await twoTabs(fp, true);
    expect(statusB).toBe(409);
    expect([...world]).toEqual(["fromA"]);
    expect(await s.branches()).toHaveLength(1);
    expect((await loadChat(s)).map((m) => (m.id.startsWith("msg") ? "answer" : m.id))).toEqual(["q1", "answer", "q2", "answer"]);
  });

  it("with the branch alone, it forks over that turn and undoes its call (why the guide sends the head)", async () => {
    const { fp } = dbs.open();
    const { s, world, statusB } = await twoTabs(fp, false);
    expect(statusB).toBe(200);
    expect([...world]).toEqual([]);
    expect(await s.branches()).toHaveLength(2);
  });
});
