// forkpoint/ai tools at their edges: a client-side tool, a tool that throws, two calls sharing one toolCallId in a
// step; undo receives the recorded args and result, replay the recorded toolCallId.
import { generateText, isStepCount, streamText, tool } from "ai";
import { expect, it } from "vitest";
import { z } from "zod";
import { undoableTools } from "../../src/ai/index.js";
import { tempDatabases } from "../helpers.js";
import { call, scriptedModel, scriptedStreamModel, text } from "./mock-model.js";

const dbs = tempDatabases();

it("one step with a client-side tool, a throwing tool and a repeated call id: each is journaled, undone and replayed as it ran", async () => {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  const cp = await s.checkpoint();
  const log: string[] = [];
  const appTools = {
    put: tool({
      inputSchema: z.object({ k: z.string() }),
      execute: async ({ k }, { toolCallId }) => (log.push(`put ${k} ${toolCallId}`), { at: k, n: [1] }),
    }),
    boom: tool({
      inputSchema: z.object({}),
      execute: async (): Promise<string> => {
        throw new Error("boom!");
      },
    }),
    ask_user: tool({ inputSchema: z.object({ q: z.string() }) }),
  };
  const tools = undoableTools(s, appTools, {
    put: ({ args, result }) => void log.push(`undo ${args.k} ${JSON.stringify(result)}`),
    boom: () => void log.push("undo boom"),
  });
  expect(tools.ask_user).toBe(appTools.ask_user);
  const r = await generateText({
    model: scriptedModel([
      [call("x1", "put", { k: "a" }), call("x1", "put", { k: "b" }), call("b1", "boom", {}), call("c1", "ask_user", { q: "?" })],
      [text("end")],
    ]),
    tools,
    prompt: "go",
    stopWhen: isStepCount(4),
  });
  // The loop stops at the client-side call; the throw is the model's tool-error, recorded as failed.
  expect(r.steps[0]!.content.filter((c) => c.type === "tool-error").map((c) => String((c as { error: unknown }).error))).toEqual([
    "Error: boom!",
  ]);
  expect((await s.toolTrack()).map((t) => [t.tool, t.callId, t.status, t.args, t.result])).toEqual([
    ["put", "x1", "succeeded", { k: "a" }, { at: "a", n: [1] }],
    ["put", "x1", "succeeded", { k: "b" }, { at: "b", n: [1] }],
    ["boom", "b1", "failed", {}, null],
  ]);
  const loop = (await s.info()).currentBranchId;
  // The step's two calls ran side by side: they are undone last applied first (whichever finished first), and
  // replayed in the lineage's order (the track's).
  const back = await s.rollback(cp.id);
  const undone = back.undone.map((t) => (t.args as { k: string }).k);
  expect([...undone].sort()).toEqual(["a", "b"]);
  const again = await s.switchBranch(loop);
  expect(again.replayed.map((t) => (t.args as { k: string }).k)).toEqual(["a", "b"]);
  // A failed call is never undone nor replayed.
  expect(log.slice(0, 2).sort()).toEqual(["put a x1", "put b x1"]);
  expect(log.slice(2)).toEqual([...undone.map((k) => `undo ${k} {"at":"${k}","n":[1]}`), "put a x1", "put b x1"]);
});

it("a tool that streams preliminary outputs still streams them wrapped; its final output is what is recorded", async () => {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  const progress = {
    fetch_report: tool({
      inputSchema: z.object({ id: z.string() }),
      execute: async function* ({ id }) {
        yield { status: "loading" as const };
        yield { status: "done" as const, id };
      },
    }),
  };
  const outputs = async (tools: typeof progress) => {
    const result = streamText({
      model: scriptedStreamModel([[call("r1", "fetch_report", { id: "q3" })], [text("ok")]]),
      tools,
      prompt: "go",
      stopWhen: isStepCount(3),
    });
    const seen: unknown[] = [];
    for await (const part of result.fullStream) if (part.type === "tool-result") seen.push([part.output, part.preliminary ?? false]);
    return seen;
  };
  const plain = await outputs(progress);
  expect(plain).toEqual([
    [{ status: "loading" }, true],
    [{ status: "done", id: "q3" }, true],
    [{ status: "done", id: "q3" }, false],
  ]);
  expect(await outputs(undoableTools(s, progress))).toEqual(plain);
  expect((await s.toolTrack()).map((t) => t.result)).toEqual([{ status: "done", id: "q3" }]);
});
