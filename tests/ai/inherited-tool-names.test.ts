// Tools named like Object.prototype members (`toString`, `constructor`, `__proto__`) are tools like any other: one
// given no undo is irreversible (a rollback skips it, a switch back does not run it again), one named `__proto__` is
// wrapped and journaled. Their undos are read by own key only.
import { appendFileSync, readFileSync } from "node:fs";
import path from "node:path";
import { generateText, isStepCount, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { expect, it } from "vitest";
import { z } from "zod";
import { undoableTools } from "../../src/ai/index.js";
import { tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};

for (const name of ["send_email", "toString", "valueOf", "constructor", "hasOwnProperty"])
  it(`a tool named ${name} without an undo is skipped by a rollback and not run again by a switch back`, async () => {
    const file = path.join(tempDir(), "sent.log");
    const tools = {
      [name]: tool({
        description: "send",
        inputSchema: z.object({ to: z.string() }),
        execute: async ({ to }) => {
          appendFileSync(file, `sent to ${to}\n`);
          return { sent: to };
        },
      }),
    };
    const call = { type: "tool-call" as const, toolCallId: "call-1", toolName: name, input: JSON.stringify({ to: "bob" }) };
    const model = new MockLanguageModelV4({
      doGenerate: [
        { content: [call], finishReason: { unified: "tool-calls" as const, raw: undefined }, usage, warnings: [] },
        {
          content: [{ type: "text" as const, text: "done" }],
          finishReason: { unified: "stop" as const, raw: undefined },
          usage,
          warnings: [],
        },
      ],
    });
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const cp = await s.checkpoint({ name: "before" });
    await generateText({ model, tools: undoableTools(s, tools, {}), prompt: "send", stopWhen: isStepCount(3) });
    const head = (await s.info()).currentBranchId;
    expect((await s.toolTrack()).map((t) => t.tool)).toEqual([name]);
    const plan = await s.plan({ checkpointId: cp.id });
    expect([plan.undone.length, plan.skipped.length]).toEqual([0, 1]);
    const back = await s.rollback(cp.id);
    expect([back.undone.length, back.skipped.length]).toEqual([0, 1]);
    const there = await s.switchBranch(head);
    expect(there.replayed).toEqual([]);
    expect(readFileSync(file, "utf8")).toBe("sent to bob\n");
  });

it("a tool named __proto__ is wrapped and journaled, and undone by its own undo", async () => {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  const undone: string[] = [];
  const mk = () => tool({ inputSchema: z.object({ text: z.string() }), execute: async () => "ok" });
  // As JSON.parse gives them: `__proto__` an own key of each object.
  const tools = JSON.parse('{"__proto__": 0, "plain": 0}') as Record<string, unknown>;
  const undos = JSON.parse('{"__proto__": 0, "plain": 0}') as Record<string, unknown>;
  for (const k of Object.keys(tools)) {
    Object.defineProperty(tools, k, { value: mk(), enumerable: true, writable: true, configurable: true });
    Object.defineProperty(undos, k, { value: async () => void undone.push(k), enumerable: true, writable: true, configurable: true });
  }
  const cp = await s.checkpoint({ name: "before" });
  const wrapped = undoableTools(s, tools as never, undos as never, {} as never) as Record<
    string,
    { execute(...a: unknown[]): Promise<unknown> }
  >;
  const opts = (id: string) => ({ toolCallId: id, messages: [{ role: "user", content: "x" }], abortSignal: new AbortController().signal });
  expect(Object.keys(wrapped)).toEqual(["__proto__", "plain"]);
  await wrapped["plain"]!.execute({ text: "a" }, opts("c1"));
  await Object.getOwnPropertyDescriptor(wrapped, "__proto__")!.value.execute({ text: "b" }, opts("c2"));
  expect((await s.toolTrack()).map((t) => t.tool)).toEqual(["plain", "__proto__"]);
  expect((await s.rollback(cp.id)).undone.map((c) => c.tool)).toEqual(["__proto__", "plain"]);
  expect(undone).toEqual(["__proto__", "plain"]);
});
