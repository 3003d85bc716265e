// A tab approves a call and the user stops the answer while it runs (saved showing the approval answered); a stale tab then answers otherwise.
import { convertToModelMessages, createIdGenerator, isStepCount, streamText, tool, type LanguageModel, type UIMessage } from "ai";
import { expect, it } from "vitest";
import { z } from "zod";
import type { Forkpoint, SessionHandle } from "../../src/index.js";
import { loadChat, saveChat, undoableTools } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { call, scriptedStreamModel, text } from "./mock-model.js";

const dbs = tempDatabases();

const user = (id: string, t: string): UIMessage => ({ id, role: "user", parts: [{ type: "text", text: t }] });

/**
 * The guide's route without `at` (saveChat before the loop, tools `{ after }` its question, the answer saved in
 * `onEnd`); with `stop`, `send` aborts the request as it starts and ends only once the answer is saved.
 */
async function route(
  fp: Forkpoint,
  s: SessionHandle,
  world: Set<string>,
  messages: UIMessage[],
  model: LanguageModel,
  stop?: AbortController,
) {
  const asked = await saveChat(s, messages);
  const after = asked.lastMessageId;
  let saved!: () => void;
  const answered = new Promise<void>((resolve) => (saved = resolve));
  const execute = async ({ k }: { k: string }) => {
    stop?.abort();
    if (stop) await answered;
    world.add(k);
    return k;
  };
  const tools = {
    put: tool({ inputSchema: z.object({ k: z.string() }), execute }),
    send: tool({ inputSchema: z.object({ k: z.string() }), execute, needsApproval: true }),
  };
  const undo = ({ args }: { args: { k: string } }) => void world.delete(args.k);
  // The stopped call's completion, recorded once its tool ended.
  const ran = new Promise<void>((resolve) => fp.on("tool", () => resolve()));
  const result = streamText({
    model,
    messages: await convertToModelMessages(messages, { ignoreIncompleteToolCalls: true }),
    tools: undoableTools(s, tools, { put: undo, send: undo }, { after, ...(stop ? { abortController: stop } : {}) }),
    stopWhen: isStepCount(6),
    ...(stop ? { abortSignal: stop.signal } : {}),
  });
  let saving!: Promise<unknown>;
  const response = result.toUIMessageStreamResponse({
    originalMessages: messages,
    generateMessageId: createIdGenerator({ prefix: "msg", size: 16 }),
    onEnd: ({ messages: all }) => void (saving = saveChat(s, all, { after })),
  });
  await response.text();
  await saving;
  saved();
  if (stop) await ran;
}

/** The chat with the approval of `g1` answered. */
function respond(chat: UIMessage[], approved: boolean): UIMessage[] {
  const answer = chat.at(-1)!;
  const parts = answer.parts.map((p) =>
    "toolCallId" in p && p.toolCallId === "g1" && p.state === "approval-requested"
      ? { ...p, state: "approval-responded" as const, approval: { ...p.approval, approved } }
      : p,
  );
  return [...chat.slice(0, -1), { ...answer, parts } as UIMessage];
}

for (const stale of ["denies it", "asks on"] as const) {
  it(`an approved call stopped while it ran, then a stale tab ${stale}: the stale tab's branch holds no approved call`, async () => {
    const { fp } = dbs.open();
    const world = new Set<string>();
    const s = await fp.createSession({ userId: "u" });
    await route(fp, s, world, [user("q", "send it")], scriptedStreamModel([[call("g1", "send", { k: "g1" })]]));
    const shown = JSON.stringify(await loadChat(s));
    const approve = respond(JSON.parse(shown) as UIMessage[], true);
    await route(fp, s, world, approve, scriptedStreamModel([[call("p1", "put", { k: "p1" })], [text("sent")]]), new AbortController());
    // The stopped answer shows the approval answered; its call ran.
    const stopped = (await loadChat(s)).at(-1)!.parts.find((p) => "toolCallId" in p && p.toolCallId === "g1");
    expect(stopped).toMatchObject({ state: "approval-responded" });
    expect([...world]).toEqual(["g1"]);

    const old = JSON.parse(shown) as UIMessage[];
    const next = stale === "denies it" ? respond(old, false) : [...old, user("q2", "and then")];
    await route(fp, s, world, next, scriptedStreamModel([[call("p2", "put", { k: "p2" })], [text("done")]]));
    expect((await s.toolTrack()).filter((t) => t.applied).map((t) => t.callId)).toEqual(["p2"]);
    expect([...world]).toEqual(["p2"]);
    const [answer] = (await s.history({ withVersions: true })).filter((m) => m.role === "assistant");
    expect([answer!.versions!.index, answer!.versions!.count]).toEqual([1, 2]);
    const g1 = (await loadChat(s))[1]!.parts.find((p) => "toolCallId" in p && p.toolCallId === "g1");
    expect(g1).toMatchObject({ state: stale === "denies it" ? "output-denied" : "approval-requested" });
  });
}
