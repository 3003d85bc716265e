// forkpoint/ai tools: a multi-step generateText loop (the AI SDK's mock model) writes real files through undoableTools;
// a rollback undoes them, a switch back replays them with the recorded toolCallId, a move mid-loop stops the loop.
import { generateText, isStepCount, streamText, tool } from "ai";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConflictError } from "../../src/index.js";
import { aiToolDefinitions, undoableTools } from "../../src/ai/index.js";
import { makeTempDir, removeDir, tempDatabases } from "../helpers.js";
import { call, scriptedModel, scriptedStreamModel, text } from "./mock-model.js";
import { openForkpoint } from "../fixtures/backend.js";

const dbs = tempDatabases();

/** An AI SDK tool writing a real file under `dir`, and its undo; `seen` records each execute's toolCallId. */
function fileTools(dir: string) {
  const seen: string[] = [];
  const tools = {
    write_file: tool({
      description: "Write a file",
      inputSchema: z.object({ path: z.string(), text: z.string() }),
      execute: async ({ path, text }, { toolCallId }) => {
        seen.push(toolCallId);
        writeFileSync(join(dir, path), text);
        return { written: path };
      },
    }),
    shout: tool({
      description: "Irreversible: prints",
      inputSchema: z.object({ words: z.string() }),
      execute: async ({ words }) => words.toUpperCase(),
    }),
  };
  const undos = { write_file: async ({ args }: { args: { path: string } }) => rmSync(join(dir, args.path)) };
  return { tools, undos, seen };
}

/** A model that asks for two writes, then answers; `move` runs (once) as its second step begins. */
function twoWritesMovedBetween(move: () => Promise<void>) {
  let step = 0;
  const model = scriptedModel([]);
  const scripted = scriptedModel([
    [call("c1", "write_file", { path: "one.txt", text: "1" })],
    [call("c2", "write_file", { path: "two.txt", text: "2" })],
    [text("done")],
  ]);
  model.doGenerate = async (options) => {
    if (step++ === 1) await move();
    return scripted.doGenerate(options);
  };
  return model;
}

describe("undoableTools in a generateText loop", () => {
  it("journals each call with the AI SDK's toolCallId, undoes on rollback and replays on switch back", async () => {
    const dir = makeTempDir();
    try {
      const { fp } = dbs.open();
      const s = await fp.createSession({ userId: "u" });
      const { tools, undos, seen } = fileTools(dir);
      const before = await s.checkpoint({ name: "before" });
      const model = scriptedModel([
        [call("call-a", "write_file", { path: "a.txt", text: "A" })],
        [call("call-b", "write_file", { path: "b.txt", text: "B" }), call("call-s", "shout", { words: "hi" })],
        [text("done")],
      ]);
      const result = await generateText({
        model,
        tools: undoableTools(s, tools, undos),
        prompt: "write two files",
        stopWhen: isStepCount(5),
      });
      expect(result.text).toBe("done");
      expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("A");
      expect(readFileSync(join(dir, "b.txt"), "utf8")).toBe("B");

      const track = await s.toolTrack();
      expect(track.map((t) => [t.tool, t.callId, t.status])).toEqual([
        ["write_file", "call-a", "succeeded"],
        ["write_file", "call-b", "succeeded"],
        ["shout", "call-s", "succeeded"],
      ]);
      expect(track[0]!.args).toEqual({ path: "a.txt", text: "A" });
      expect(track[2]!.result).toBe("HI");
      const loopBranch = (await s.info()).currentBranchId;

      const back = await s.rollback(before.id);
      expect(back.undone.map((t) => t.callId)).toEqual(["call-b", "call-a"]);
      expect(back.skipped.map((t) => t.tool)).toEqual(["shout"]);
      expect(existsSync(join(dir, "a.txt")) || existsSync(join(dir, "b.txt"))).toBe(false);

      const again = await s.switchBranch(loopBranch);
      expect(again.replayed.map((t) => t.callId)).toEqual(["call-a", "call-b"]);
      expect(readFileSync(join(dir, "b.txt"), "utf8")).toBe("B");
      // The replay called the tool's own execute with the recorded toolCallId.
      expect(seen).toEqual(["call-a", "call-b", "call-a", "call-b"]);
    } finally {
      removeDir(dir);
    }
  });

  it("refuses the loop's further calls once a rollback moved the session, and aborts the loop's signal", async () => {
    const dir = makeTempDir();
    try {
      const { fp } = dbs.open();
      const s = await fp.createSession({ userId: "u" });
      const { tools, undos } = fileTools(dir);
      const start = await s.checkpoint({ name: "start" });
      const abortController = new AbortController();
      // The app's stop button: a rollback while the loop runs, here between the model's first and second steps.
      const model = twoWritesMovedBetween(async () => void (await s.rollback(start.id)));
      const wrapped = undoableTools(s, tools, undos, { abortController });
      const loop = generateText({ model, tools: wrapped, prompt: "go", stopWhen: isStepCount(5), abortSignal: abortController.signal });
      await expect(loop).rejects.toThrow();
      expect(abortController.signal.aborted).toBe(true);
      expect(abortController.signal.reason).toBeInstanceOf(ConflictError);
      expect((abortController.signal.reason as ConflictError).code).toBe("SESSION_MOVED");
      // one.txt was undone by the rollback; two.txt was never written, and the new branch has no call on it.
      expect(existsSync(join(dir, "one.txt"))).toBe(false);
      expect(existsSync(join(dir, "two.txt"))).toBe(false);
      expect(await s.toolTrack()).toEqual([]);
    } finally {
      removeDir(dir);
    }
  });

  it("aborts the loop's signal when s.undo() or s.redo() moves the session mid-loop, as any other move does", async () => {
    for (const op of ["undo", "redo"] as const) {
      const dir = makeTempDir();
      try {
        const { fp } = dbs.open();
        const s = await fp.createSession({ userId: "u" });
        const { tools, undos } = fileTools(dir);
        const start = await s.checkpoint({ name: "start" });
        await s.append({ role: "user", content: "first try" });
        await s.rollback(start.id); // undo() goes back to "first try"'s branch
        if (op === "redo") await s.undo(); // redo() comes back here
        const abortController = new AbortController();
        // Whether the move itself stopped the loop (a streaming answer with no further tool call is stopped only so).
        let abortedByMove = false;
        const model = twoWritesMovedBetween(async () => {
          await s[op]();
          abortedByMove = abortController.signal.aborted;
        });
        const wrapped = undoableTools(s, tools, undos, { abortController });
        const loop = generateText({ model, tools: wrapped, prompt: "go", stopWhen: isStepCount(5), abortSignal: abortController.signal });
        await expect(loop).rejects.toThrow();
        expect(abortedByMove).toBe(true);
        expect((abortController.signal.reason as ConflictError).code).toBe("SESSION_MOVED");
        // one.txt was undone by the move; two.txt was never written.
        expect(existsSync(join(dir, "one.txt"))).toBe(false);
        expect(existsSync(join(dir, "two.txt"))).toBe(false);
      } finally {
        removeDir(dir);
      }
    }
  });

  it("stops a streamText loop the same way: the stream ends, nothing is written on the new branch", async () => {
    const dir = makeTempDir();
    try {
      const { fp } = dbs.open();
      const s = await fp.createSession({ userId: "u" });
      const { tools, undos } = fileTools(dir);
      const start = await s.checkpoint();
      const abortController = new AbortController();
      const model = scriptedStreamModel(
        [
          [call("s1", "write_file", { path: "one.txt", text: "1" })],
          [call("s2", "write_file", { path: "two.txt", text: "2" })],
          [text("done")],
        ],
        async (step) => {
          if (step === 1) await s.rollback(start.id);
        },
      );
      const result = streamText({
        model,
        tools: undoableTools(s, tools, undos, { abortController }),
        prompt: "go",
        stopWhen: isStepCount(5),
        abortSignal: abortController.signal,
      });
      let finished = true;
      try {
        for await (const _part of result.fullStream) void _part;
        await result.text;
      } catch {
        finished = false;
      }
      expect(abortController.signal.aborted).toBe(true);
      expect(finished && (await result.steps).length === 3).toBe(false);
      expect(existsSync(join(dir, "one.txt")) || existsSync(join(dir, "two.txt"))).toBe(false);
      expect(await s.toolTrack()).toEqual([]);
    } finally {
      removeDir(dir);
    }
  });

  it("refuses a call made after a move even without an abort controller, writing nothing on the new branch", async () => {
    const dir = makeTempDir();
    try {
      const { fp } = dbs.open();
      const s = await fp.createSession({ userId: "u" });
      const { tools, undos } = fileTools(dir);
      const start = await s.checkpoint();
      const wrapped = undoableTools(s, tools, undos);
      await s.append({ role: "user", content: "hi" });
      await s.rollback(start.id);
      const execute = wrapped.write_file.execute!;
      const refused = await Promise.resolve(
        execute({ path: "late.txt", text: "x" }, { toolCallId: "late", messages: [], context: {} }),
      ).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ConflictError);
      expect((refused as ConflictError).code).toBe("SESSION_MOVED");
      expect(existsSync(join(dir, "late.txt"))).toBe(false);
      expect(await s.toolTrack()).toEqual([]);
      // Tools wrapped after the move work on the new branch.
      await undoableTools(s, tools, undos).write_file.execute!(
        { path: "ok.txt", text: "y" },
        { toolCallId: "ok", messages: [], context: {} },
      );
      expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["ok"]);
    } finally {
      removeDir(dir);
    }
  });

  it("each session's moves use the functions that session wrapped, not the latest wrapper's", async () => {
    const [dirA, dirB] = [makeTempDir(), makeTempDir()];
    try {
      const { fp } = dbs.open();
      const [a, b] = [await fp.createSession({ userId: "u" }), await fp.createSession({ userId: "u" })];
      const [cpA, cpB] = [await a.checkpoint(), await b.checkpoint()];
      const [toolsA, toolsB] = [fileTools(dirA), fileTools(dirB)];
      const wrappedA = undoableTools(a, toolsA.tools, toolsA.undos);
      const wrappedB = undoableTools(b, toolsB.tools, toolsB.undos);
      await wrappedA.write_file.execute!({ path: "f.txt", text: "a" }, { toolCallId: "ca", messages: [], context: {} });
      await wrappedB.write_file.execute!({ path: "f.txt", text: "b" }, { toolCallId: "cb", messages: [], context: {} });
      await a.rollback(cpA.id);
      expect([existsSync(join(dirA, "f.txt")), existsSync(join(dirB, "f.txt"))]).toEqual([false, true]);
      await b.rollback(cpB.id);
      expect(existsSync(join(dirB, "f.txt"))).toBe(false);
    } finally {
      removeDir(dirA);
      removeDir(dirB);
    }
  });

  it("hands each live call the AI SDK's own options, even when two sessions' models use the same call id", async () => {
    const { fp } = dbs.open();
    const [a, b] = [await fp.createSession({ userId: "u" }), await fp.createSession({ userId: "u" })];
    const seen: unknown[] = [];
    const probe = {
      probe: tool({
        inputSchema: z.object({}),
        contextSchema: z.object({ from: z.string() }),
        execute: async (_input, { context }) => (seen.push(context.from), "ok"),
      }),
    };
    const toolsContext = { probe: { from: "replays" } };
    const [wa, wb] = [undoableTools(a, probe, {}, { toolsContext }), undoableTools(b, probe, {}, { toolsContext })];
    await Promise.all([
      wa.probe.execute({}, { toolCallId: "call_0", messages: [], context: { from: "a" } }),
      wb.probe.execute({}, { toolCallId: "call_0", messages: [], context: { from: "b" } }),
    ]);
    expect(seen.sort()).toEqual(["a", "b"]);
  });

  it("aiToolDefinitions lets a new opener undo the calls before any undoableTools call (one definition per tool)", async () => {
    const dir = makeTempDir();
    try {
      const path = dbs.path();
      const { tools, undos } = fileTools(dir);
      const fp1 = dbs.track(openForkpoint({ path }));
      const s1 = await fp1.createSession({ userId: "u" });
      const cp = await s1.checkpoint();
      await generateText({
        model: scriptedModel([[call("k1", "write_file", { path: "k.txt", text: "K" })], [text("ok")]]),
        tools: undoableTools(s1, tools, undos),
        prompt: "go",
        stopWhen: isStepCount(3),
      });
      await fp1.close();
      const fp2 = dbs.track(openForkpoint({ path, tools: aiToolDefinitions(tools, undos) }));
      const s2 = await fp2.getSession(s1.id, { userId: "u" });
      const r = await s2.rollback(cp.id);
      expect(r.undone.map((t) => t.callId)).toEqual(["k1"]);
      expect(existsSync(join(dir, "k.txt"))).toBe(false);
    } finally {
      removeDir(dir);
    }
  });

  it("refuses an undo for a tool the ToolSet lacks, and a name taken by a defineTool tool", async () => {
    const dir = makeTempDir();
    try {
      const { tools, undos } = fileTools(dir);
      const { fp } = dbs.open({ tools: [{ name: "write_file", run: () => null }] });
      const s = await fp.createSession({ userId: "u" });
      expect(() => undoableTools(s, tools, { ...undos, writ_file: async () => {} } as never)).toThrow(/names no tool/);
      expect(() => undoableTools(s, tools, undos)).toThrow(expect.objectContaining({ code: "TOOL_NAME_TAKEN" }));
    } finally {
      removeDir(dir);
    }
  });
});
