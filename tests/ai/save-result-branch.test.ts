// SaveResult.branchId is the page's next `ifAt`: after a regenerate's fork it is the fork's branch, where the session is.
import { convertToModelMessages, createIdGenerator, isStepCount, streamText, tool, type UIMessage } from "ai";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConflictError } from "../../src/index.js";
import { loadChat, saveChat, undoableTools, type SaveResult } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { TestChat } from "./chat-client.js";
import { call, scriptedStreamModel, text } from "./mock-model.js";

const dbs = tempDatabases();
const q = (id: string, t: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text: t }] });
const a = (id: string, t: string): UIMessage => ({ id, role: "assistant", parts: [{ type: "text", text: t }] });

describe("SaveResult.branchId", () => {
  it("a regenerate's save (a shorter list) returns the branch it forked, the current one", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await saveChat(s, [q("q1", "hi"), a("a1", "hello")]);
    const regenerated = await saveChat(s, [q("q1", "hi")]);
    expect(regenerated.forked).toBe("truncate");
    expect(regenerated.branchId).toBe((await s.info()).currentBranchId);
    // The same list again (nothing written): still the current branch, not the question's.
    expect((await saveChat(s, [q("q1", "hi")])).branchId).toBe((await s.info()).currentBranchId);
    expect(await saveChat(s, [q("q1", "hi"), a("a2", "hey")], { ifAt: { branchId: regenerated.branchId } })).toMatchObject({
      appended: 1,
      branchId: regenerated.branchId,
    });
  });

  it("the guide's route with onStepEnd saves: the request after a regenerate, sent with the answer's branch, is saved", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const world = new Set<string>();
    const put = tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (world.add(k), k) });
    const model = scriptedStreamModel([
      [call("call_0", "put", { k: "a" })],
      [text("put a")],
      [call("call_0", "put", { k: "b" })],
      [text("put b")],
      [text("fine")],
    ]);
    const statuses: number[] = [];
    let at = (await s.info()).currentBranchId;
    const route = async (req: Request): Promise<Response> => {
      const { messages } = (await req.json()) as { messages: UIMessage[] };
      let asked: SaveResult;
      try {
        asked = await saveChat(s, messages, { ifAt: { branchId: at } });
      } catch (e) {
        if (!(e instanceof ConflictError && e.code === "SESSION_MOVED")) throw e;
        statuses.push(409);
        return Response.json({ code: e.code }, { status: 409 });
      }
      statuses.push(200);
      const result = streamText({
        model,
        messages: await convertToModelMessages(messages),
        tools: undoableTools(s, { put }, { put: ({ args }) => void world.delete(args.k) }, { after: asked.lastMessageId }),
        stopWhen: isStepCount(5),
      });
      const save = async ({ messages: all }: { messages: UIMessage[] }) => void (await saveChat(s, all, { after: asked.lastMessageId }));
      return result.toUIMessageStreamResponse({
        originalMessages: messages,
        generateMessageId: createIdGenerator({ prefix: "msg", size: 16 }),
        messageMetadata: () => ({ branchId: asked.branchId }),
        onStepEnd: save,
        onEnd: save,
      });
    };
    const chat = new TestChat({ id: s.id, route });
    const next = () => void (at = (chat.lastMessage!.metadata as { branchId: string }).branchId);
    await chat.sendMessage({ text: "put something" });
    next();
    await chat.regenerate();
    next();
    await chat.sendMessage({ text: "ok?" });
    expect(chat.error).toBeUndefined();
    expect(statuses).toEqual([200, 200, 200]);
    expect((await loadChat(s)).map((m) => m.parts.map((p) => (p.type === "text" ? p.text : "")).join(""))).toEqual([
      "put something",
      "put b",
      "ok?",
      "fine",
    ]);
    expect([...world]).toEqual(["b"]);
  });
});
