// forkpoint/ai: two tool loops on one session in one process; a model's own rollback (aiCheckpointTools) in one loop
// lets that loop go on from the new branch and stops the other, whose calls never land on the rollback's branch.
import { generateText, isStepCount, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { aiCheckpointTools, undoableTools } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { call, scriptedModel, text } from "./mock-model.js";

const dbs = tempDatabases();

type Content = Awaited<ReturnType<MockLanguageModelV4["doGenerate"]>>["content"];
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
const step = (content: Content) => ({
  content,
  finishReason: { unified: content.some((c) => c.type === "tool-call") ? ("tool-calls" as const) : ("stop" as const), raw: undefined },
  usage,
  warnings: [],
});

/** A model answering step i with `steps[i]()`, which may wait for the other loop. */
const model = (steps: (() => Promise<Content>)[]) => {
  let i = 0;
  return new MockLanguageModelV4({ doGenerate: async () => step(await (steps[i++] ?? (async () => [text("done")]))()) });
};

/**
 * Loop A (optionally `put a1` first) waits while loop B's model rolls back, then asks for `put a2`; B then asks for
 * `put b1`. With `controllers`, each loop's tools and `generateText` share an abort controller, as the docs show.
 */
async function twoLoops(options: { controllers: boolean; aCallsFirst: boolean }) {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  await s.append({ role: "user", content: "start" });
  const cp = await s.checkpoint({ name: "cp" });
  await s.append({ role: "user", content: "after the checkpoint" }); // so that the rollback moves, calls or not
  const world = new Set<string>();
  const tools = { put: tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (world.add(k), k) }) };
  const undos = { put: async ({ args }: { args: { k: string } }) => void world.delete(args.k) };
  let aReady!: () => void;
  const aWaits = new Promise<void>((r) => (aReady = r));
  let bMoved!: () => void;
  const bRolledBack = new Promise<void>((r) => (bMoved = r));
  const stopA = options.controllers ? new AbortController() : undefined;
  const stopB = options.controllers ? new AbortController() : undefined;
  const loopA = generateText({
    model: model([
      ...(options.aCallsFirst ? [async () => [call("a-1", "put", { k: "a1" })]] : []),
      async () => (aReady(), await bRolledBack, [call("a-2", "put", { k: "a2" })]),
    ]),
    tools: undoableTools(s, tools, undos, stopA ? { abortController: stopA } : {}),
    prompt: "A",
    stopWhen: isStepCount(5),
    ...(stopA ? { abortSignal: stopA.signal } : {}),
  }).then(
    (r) => ({
      ran: r.steps.flatMap((st) => st.toolResults.map((t) => t.output)),
      errors: r.steps.flatMap((st) => st.content.filter((c) => c.type === "tool-error")),
    }),
    (e: unknown) => ({ stopped: e }),
  );
  const loopB = generateText({
    model: model([
      async () => (await aWaits, [call("b-r", "rollback", { checkpointId: cp.id })]),
      async () => (bMoved(), [call("b-1", "put", { k: "b1" })]),
    ]),
    tools: { ...undoableTools(s, tools, undos, stopB ? { abortController: stopB } : {}), ...aiCheckpointTools(s) },
    prompt: "B",
    stopWhen: isStepCount(5),
    ...(stopB ? { abortSignal: stopB.signal } : {}),
  });
  const [a, b] = await Promise.all([loopA, loopB]);
  return { s, cp, a, b, world };
}

describe("a model's own rollback with two loops on the session", () => {
  it("stops the other loop (SESSION_MOVED, aborted); only the loop that rolled back goes on", async () => {
    const { s, a, b, world } = await twoLoops({ controllers: true, aCallsFirst: true });
    expect(a).toMatchObject({ stopped: { code: "SESSION_MOVED" } });
    expect(b.text).toBe("done");
    expect(b.steps[0]!.toolResults[0]!.output).toMatchObject({ ok: true, undone: [{ tool: "put" }] });
    expect(b.steps[1]!.toolResults[0]!.output).toBe("b1");
    expect([...world]).toEqual(["b1"]);
    expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["b-1"]);
  });

  it("tells the loops apart without abort controllers, by their calls' messages", async () => {
    const { s, a, b, world } = await twoLoops({ controllers: false, aCallsFirst: true });
    expect(a).toMatchObject({ ran: ["a1"], errors: [{ toolCallId: "a-2", error: { code: "SESSION_MOVED" } }] });
    expect(b.steps[1]!.toolResults[0]!.output).toBe("b1");
    expect([...world]).toEqual(["b1"]);
    expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["b-1"]);
  });

  it("refuses the other loop's first call when neither loop had made one before the rollback", async () => {
    const { s, a, b, world } = await twoLoops({ controllers: false, aCallsFirst: false });
    expect(a).toMatchObject({ ran: [], errors: [{ toolCallId: "a-2", error: { code: "SESSION_MOVED" } }] });
    expect(b.steps[1]!.toolResults[0]!.output).toBe("b1");
    expect([...world]).toEqual(["b1"]);
    expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["b-1"]);
  });

  it("tools wrapped once for many turns follow a later turn's rollback made before that turn's first call", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const cp = await s.checkpoint({ name: "cp" });
    const world = new Set<string>();
    const put = tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (world.add(k), k) });
    const tools = { ...undoableTools(s, { put }, { put: ({ args }) => void world.delete(args.k) }), ...aiCheckpointTools(s) };
    const turn = (steps: Parameters<typeof scriptedModel>[0]) =>
      // Each turn's messages built anew (as read back from the session): no object is shared with the turn before.
      generateText({ model: scriptedModel(steps), tools, messages: [{ role: "user", content: "go" }], stopWhen: isStepCount(5) });
    await turn([[call("p1", "put", { k: "a" })], [text("one")]]);
    const second = await turn([[call("r1", "rollback", { checkpointId: cp.id })], [call("p2", "put", { k: "b" })], [text("two")]]);
    expect(second.steps[1]!.toolResults[0]!.output).toBe("b");
    expect([...world]).toEqual(["b"]);
    expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["p2"]);
  });

  it("tools wrapped once for many turns go on in the turns after one whose first call rolled back", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const cp = await s.checkpoint({ name: "cp" });
    await s.append({ role: "user", content: "after the checkpoint" }); // so that the rollback moves
    const world = new Set<string>();
    const put = tool({ inputSchema: z.object({ k: z.string() }), execute: async ({ k }) => (world.add(k), k) });
    const tools = { ...undoableTools(s, { put }, { put: ({ args }) => void world.delete(args.k) }), ...aiCheckpointTools(s) };
    const turn = (steps: Parameters<typeof scriptedModel>[0]) =>
      generateText({ model: scriptedModel(steps), tools, messages: [{ role: "user", content: "go" }], stopWhen: isStepCount(5) });
    // The rolling-back turn makes no call of the wrapped tools: the guard never saw its loop, nor the next turns'.
    await turn([[call("r1", "rollback", { checkpointId: cp.id })], [text("rolled back")]]);
    const second = await turn([[call("p1", "put", { k: "a" })], [text("two")]]);
    const third = await turn([[call("p2", "put", { k: "b" })], [text("three")]]);
    expect(second.steps[0]!.toolResults[0]!.output).toBe("a");
    expect(third.steps[0]!.toolResults[0]!.output).toBe("b");
    expect([...world]).toEqual(["a", "b"]);
    expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["p1", "p2"]);
  });
});
