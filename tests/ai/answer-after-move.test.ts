// The stream-then-edit race: an answer streams while the user edits its question (another tab, another server); the
// route handler of docs/ai-sdk.md saves the answer `after` its question, so it lands on the question's own branch, the edit stays
// current, and nothing is forked or moved by the save. In one process, and with the route in a process of its own.
import { convertToModelMessages, createIdGenerator, streamText, type UIMessage } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { defineTool, type Forkpoint, type SessionHandle } from "../../src/index.js";
import { loadChat, saveChat, type SaveResult } from "../../src/ai/index.js";
import { startWorker } from "../fixtures/workers.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const WORKER = fileURLToPath(new URL("../fixtures/chat-route-worker.ts", import.meta.url));

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

/** A streaming model whose answer `answer` ends only once `gate` resolves (`started` resolves when it streams). */
function gatedModel(answer: string, gate: Promise<void>) {
  let started!: () => void;
  const streaming = new Promise<void>((resolve) => (started = resolve));
  const model = new MockLanguageModelV4({
    doStream: async () => ({
      stream: new ReadableStream({
        async start(controller) {
          controller.enqueue({ type: "text-start", id: "t" });
          controller.enqueue({ type: "text-delta", id: "t", delta: answer });
          started();
          await gate;
          controller.enqueue({ type: "text-end", id: "t" });
          controller.enqueue({ type: "finish", finishReason: { unified: "stop", raw: undefined }, usage });
          controller.close();
        },
      }),
    }),
  });
  return { model, streaming };
}

/** docs/ai-sdk.md's route handler (saveChat before the loop, the answer saved after the request's last message). */
function route(fp: Forkpoint, model: MockLanguageModelV4, saves: SaveResult[]) {
  return async (req: Request): Promise<Response> => {
    const { id, messages } = (await req.json()) as { id: string; messages: UIMessage[] };
    const chat = await fp.getSession(id, { userId: "alice" });
    const asked = await saveChat(chat, messages);
    const result = streamText({ model, messages: await convertToModelMessages(messages) });
    return result.toUIMessageStreamResponse({
      originalMessages: messages,
      generateMessageId: createIdGenerator({ prefix: "msg", size: 16 }),
      onEnd: async ({ messages: all }) => void saves.push(await saveChat(chat, all, { after: asked.lastMessageId })),
    });
  };
}

const ui = (id: string, role: "user" | "assistant", text: string): UIMessage => ({ id, role, parts: [{ type: "text", text }] });
const texts = (messages: UIMessage[]) => messages.map((m) => m.parts.map((p) => (p.type === "text" ? p.text : "")).join(""));
const post = (id: string, messages: UIMessage[]) =>
  new Request("http://app.test/api/chat", { method: "POST", body: JSON.stringify({ id, messages }) });

/** A chat with a first exchange, and the second question as the client sends it. */
async function started(fp: Forkpoint): Promise<{ s: SessionHandle; request: UIMessage[] }> {
  const s = await fp.createSession({ userId: "alice" });
  await saveChat(s, [ui("q1", "user", "hello"), ui("a1", "assistant", "hi")]);
  return { s, request: [ui("q1", "user", "hello"), ui("a1", "assistant", "hi"), ui("q2", "user", "trip to Lisbon?")] };
}

/** What the race must leave: the answer after its question on the question's branch, the edit current and untouched. */
async function expectAnswerOnItsOwnBranch(s: SessionHandle, saved: SaveResult, editedBranch: string) {
  expect((await s.info()).currentBranchId).toBe(editedBranch);
  expect(texts(await loadChat(s))).toEqual(["hello", "hi", "trip to Porto?"]);
  const answered = await s.history({ branchId: saved.branchId });
  expect(answered.map((m) => m.content).length).toBe(4);
  expect(saved).toMatchObject({ forked: null, appended: 1, kept: 3 });
  expect(answered.at(-1)!.id).toBe(saved.lastMessageId);
  const [question] = answered.slice(-2);
  expect((await s.message(question!.id)).content).toEqual([{ type: "text", text: "trip to Lisbon?" }]);
  expect(saved.branchId).not.toBe(editedBranch);
  expect((await s.branches()).length).toBe(2);
}

describe("an answer saved after its question, while the session moved", () => {
  it("the stream-then-edit race: the answer lands on its own branch; the edit stays where the user put it", async () => {
    const { fp } = dbs.open();
    const { s, request } = await started(fp);
    let finish!: () => void;
    const { model, streaming } = gatedModel("Lisbon it is.", new Promise<void>((resolve) => (finish = resolve)));
    const saves: SaveResult[] = [];
    const response = (await route(fp, model, saves)(post(s.id, request))).text();
    await streaming;
    // Another tab edits the question while the answer streams.
    const question = (await s.history()).at(-1)!;
    const edited = await s.edit(question.id, { content: [{ type: "text", text: "trip to Porto?" }] });
    finish();
    await response;
    await expectAnswerOnItsOwnBranch(s, saves[0]!, edited.branch.id);
    // The same save again (a double submit): stored once.
    const answer = (await s.history({ branchId: saves[0]!.branchId })).at(-1)!;
    const again = await saveChat(s, [...request, { id: "a2", role: "assistant", parts: answer.content as UIMessage["parts"] }], {
      after: question.id,
    });
    expect(again).toMatchObject({ appended: 0, lastMessageId: answer.id, branchId: saves[0]!.branchId });
    expect((await s.branches()).length).toBe(2);
  });

  it("the same race with the route in another process (another app server)", async () => {
    const { fp, path } = dbs.open();
    const { s, request } = await started(fp);
    const w = startWorker(WORKER, [path, s.id, "alice", "Lisbon it is."]);
    await w.ready;
    const streaming = new Promise<void>((resolve) => w.child.stdout.on("data", (d: string) => d.includes("streaming") && resolve()));
    w.child.stdin.write(JSON.stringify(request) + "\n");
    await streaming;
    const question = (await s.history()).at(-1)!;
    expect(question.clientId).toBe("q2");
    const edited = await s.edit(question.id, { content: [{ type: "text", text: "trip to Porto?" }] });
    w.child.stdin.end("go\n");
    const run = await w.done;
    expect(run.code, run.stderr).toBe(0);
    const saved = JSON.parse(run.stdout.trim().split("\n").pop()!) as SaveResult;
    await expectAnswerOnItsOwnBranch(s, saved, edited.branch.id);
  });

  it("the same answer saved after its question by three servers at once (a double submit, a retry) is stored once", async () => {
    const { fp, path } = dbs.open();
    const { s, request } = await started(fp);
    const asked = await saveChat(s, request);
    // Two more app servers on the same database; the list each saves is the same, its answer's id the client's own.
    const handles = [s, ...(await Promise.all([0, 1].map(() => dbs.open({ path }).fp.getSession(s.id, { userId: "alice" }))))];
    const saves = await Promise.all(
      handles.map((h, i) => saveChat(h, [...request, ui(`a2-${i}`, "assistant", "Lisbon it is.")], { after: asked.lastMessageId })),
    );
    for (const saved of saves) expect(saved).toMatchObject({ lastMessageId: saves[0]!.lastMessageId, branchId: saves[0]!.branchId });
    expect(saves.map((saved) => saved.appended).sort()).toEqual([0, 0, 1]);
    expect(texts(await loadChat(s))).toEqual(["hello", "hi", "trip to Lisbon?", "Lisbon it is."]);
    expect((await s.versions(saves[0]!.lastMessageId!)).count).toBe(1);
    expect(await s.branches()).toHaveLength(1);
  });

  it("with nothing in between, a save after the last message is a plain save; a list that does not follow it is refused", async () => {
    const { fp } = dbs.open();
    const { s, request } = await started(fp);
    const asked = await saveChat(s, request);
    const answer = ui("a2", "assistant", "Lisbon it is.");
    const saved = await saveChat(s, [...request, answer], { after: asked.lastMessageId });
    expect(saved).toMatchObject({ kept: 3, appended: 1, forked: null, branchId: (await s.info()).currentBranchId });
    expect(texts(await loadChat(s))).toEqual(["hello", "hi", "trip to Lisbon?", "Lisbon it is."]);
    // The same list again writes nothing more: after the question (its answer is stored there) or after the answer.
    expect(await saveChat(s, [...request, answer], { after: asked.lastMessageId })).toMatchObject({
      appended: 0,
      lastMessageId: saved.lastMessageId,
    });
    expect(await saveChat(s, [...request, answer], { after: saved.lastMessageId })).toMatchObject({ appended: 0 });
    expect((await s.branches()).length).toBe(1);
    const error = await rejectionOf(saveChat(s, [ui("x", "user", "another chat"), answer], { after: asked.lastMessageId }));
    expect(error.code).toBe("VALIDATION_ERROR");
    expect(error.field).toBe("messages");
    expect((await rejectionOf(saveChat(s, request, { after: "msg_unknown" }))).code).toBe("NOT_FOUND");
    expect(texts(await loadChat(s))).toEqual(["hello", "hi", "trip to Lisbon?", "Lisbon it is."]);
  });

  // Review 14: another tab rolled back to a checkpoint right at the question while the loop ran: both branches end at
  // it. The answer names its loop's calls (its tool parts' ids): it lands where they are, not on the rollback's branch.
  it("after a rollback to the question, the answer lands on the branch holding its own calls", async () => {
    const world: string[] = [];
    const booking = defineTool<{ hotel: string }, string>({
      name: "book",
      run: ({ hotel }) => (world.push(hotel), hotel),
      undo: ({ args }) => void world.splice(world.indexOf(args.hotel), 1),
    });
    const { fp } = dbs.open({ tools: [booking] });
    const s = await fp.createSession({ userId: "alice" });
    const request = [ui("q1", "user", "book a hotel")];
    const asked = await saveChat(s, request);
    const atQuestion = await s.checkpoint({ name: "asked" });
    const loopBranch = (await s.info()).currentBranchId;
    await s.invoke("book", { hotel: "Hilton" }, { after: asked.lastMessageId!, callId: "call-1" });
    const rolledBack = await s.rollback(atQuestion.id); // another tab
    expect(world).toEqual([]);
    const answer: UIMessage = {
      id: "a1",
      role: "assistant",
      parts: [
        { type: "tool-book", toolCallId: "call-1", state: "output-available", input: { hotel: "Hilton" }, output: "Hilton" },
        { type: "text", text: "Booked the Hilton." },
      ],
    };
    const saved = await saveChat(s, [...request, answer], { after: asked.lastMessageId });
    expect(saved.branchId).toBe(loopBranch);
    expect((await s.info()).currentBranchId).toBe(rolledBack.branch.id);
    expect(texts(await loadChat(s))).toEqual(["book a hotel"]);
    // The answer's branch holds the call its answer shows: switching there replays it, once.
    await s.switchBranch(loopBranch);
    expect(texts(await loadChat(s))).toEqual(["book a hotel", "Booked the Hilton."]);
    expect((await s.toolTrack()).map((t) => [t.callId, t.applied])).toEqual([["call-1", true]]);
    expect(world).toEqual(["Hilton"]);
  });
});
