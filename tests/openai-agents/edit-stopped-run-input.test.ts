// An edit of the input of a run that stopped (an abort, a move by another handle) undoes the calls it made, streamed or not.
import { Agent, Runner, setTracingDisabled, tool, type AgentInputItem } from "@openai/agents";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { SessionHandle } from "../../src/index.js";
import { ForkpointSession, undoableAgentTools } from "../../src/openai-agents/index.js";
import { makeTempDir, removeDir, tempDatabases } from "../helpers.js";
import { ScriptedModel, functionCall, reply } from "./fake-model.js";

const dbs = tempDatabases();
const dirs: string[] = [];
beforeAll(() => setTracingDisabled(true));
afterEach(() => dirs.splice(0).forEach(removeDir));

/** The forkpoint message holding the user item whose text is `text`, on the current branch. */
const inputOf = async (s: SessionHandle, text: string) =>
  (await s.history()).find((m) => m.role === "user" && (m.content as { content?: unknown }).content === text)!;

/** Each item as its role or type. */
const kinds = (items: AgentInputItem[]) => items.map((item) => ("role" in item ? item.role : item.type));

/**
 * A session, a directory, and an Agent whose undoable write_file tool writes a file there; `during` runs as the tool
 * starts (before it writes), `beforeTurn` before each model turn.
 */
async function setup(
  turns: ConstructorParameters<typeof ScriptedModel>[0],
  hooks: { during?: () => Promise<void>; beforeTurn?: (turn: number) => Promise<void>; abortController?: AbortController } = {},
) {
  const dir = makeTempDir();
  dirs.push(dir);
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  const write = tool({
    name: "write_file",
    description: "Write a file",
    parameters: z.object({ path: z.string() }),
    execute: async ({ path }) => {
      await hooks.during?.();
      writeFileSync(join(dir, path), "x");
      return "ok";
    },
  });
  const undos = { write_file: ({ args }: { args: { path: string } }) => rmSync(join(dir, args.path), { force: true }) };
  const agent = new Agent({
    name: "w",
    model: new ScriptedModel(turns, hooks.beforeTurn),
    tools: undoableAgentTools(s, [write], undos, { abortController: hooks.abortController }),
  });
  return { fp, s, dir, agent, exists: (path: string) => existsSync(join(dir, path)) };
}

/** Runs the Agent to its end or its stop: "finished", or the forkpoint error's code (a `ToolCallError`'s), or a name. */
async function run(agent: Agent, input: string | AgentInputItem[], memory: ForkpointSession, stream: boolean, signal?: AbortSignal) {
  const runner = new Runner();
  const running = stream
    ? runner.run(agent, input, { session: memory, stream: true, signal }).then(async (streamed) => {
        for await (const _event of streamed) void _event;
        await streamed.completed;
      })
    : runner.run(agent, input, { session: memory, signal });
  return running.then(
    () => "finished",
    (e: { error?: { code?: string }; code?: string; name?: string }) => e.error?.code ?? e.code ?? e.name ?? "error",
  );
}

/** A run whose AbortSignal fires while its second call's tool runs (the tool ignores it, and ends). */
async function abortedRun(stream: boolean, input: string | AgentInputItem[]) {
  const stop = new AbortController();
  let started!: () => void;
  const isStarted = new Promise<void>((resolve) => (started = resolve));
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  let calls = 0;
  const turns = [
    [functionCall("c1", "write_file", { path: "a.txt" })],
    [functionCall("c2", "write_file", { path: "b.txt" })],
    [reply("done")],
  ];
  const ctx = await setup(turns, {
    during: async () => {
      if (++calls < 2) return;
      started();
      await held;
    },
  });
  const memory = new ForkpointSession(ctx.s);
  const running = run(ctx.agent, input, memory, stream, stop.signal);
  await isStarted;
  stop.abort();
  release();
  await running;
  return { ...ctx, memory };
}

describe("an edit of a stopped run's input", () => {
  for (const stream of [true, false]) {
    const mode = stream ? "streamed" : "not streamed";

    it(`stopped by its AbortSignal while a tool ran: undoes every call the run made (${mode})`, async () => {
      const { s, memory, exists } = await abortedRun(stream, "write two files");
      expect(exists("a.txt") && exists("b.txt")).toBe(true);
      // Streamed, the run saved its input alone; else with its calls' items.
      expect(kinds(await memory.getItems())).toEqual(
        stream ? ["user"] : ["user", "function_call", "function_call_result", "function_call", "function_call_result"],
      );
      expect((await s.toolTrack()).map((t) => [t.callId, t.status, t.applied])).toEqual([
        ["c1", "succeeded", true],
        ["c2", "succeeded", true],
      ]);
      const input = await inputOf(s, "write two files");
      expect((await s.plan({ messageId: input.id })).undone.map((t) => t.callId).sort()).toEqual(["c1", "c2"]);
      const edited = await s.edit(input.id, { content: "write nothing" });
      expect(edited.undone.map((t) => t.callId).sort()).toEqual(["c1", "c2"]);
      expect(exists("a.txt") || exists("b.txt")).toBe(false);
      expect(await memory.getItems()).toEqual([{ role: "user", content: "write nothing" }]);
    });
  }

  it("stopped by its AbortSignal, streamed, its input two items: an edit of the second undoes the calls too", async () => {
    const input: AgentInputItem[] = [
      { type: "message", role: "user", content: "context" },
      { type: "message", role: "user", content: "write two files" },
    ];
    const { s, memory, exists } = await abortedRun(true, input);
    expect(kinds(await memory.getItems())).toEqual(["user", "user"]);
    const second = await inputOf(s, "write two files");
    const edited = await s.edit(second.id, { content: "write nothing" });
    expect(edited.undone.map((t) => t.callId).sort()).toEqual(["c1", "c2"]);
    expect(exists("a.txt") || exists("b.txt")).toBe(false);
    // The first input item goes on the new branch again, before the new version.
    expect((await memory.getItems()).map((item) => (item as { content: unknown }).content)).toEqual(["context", "write nothing"]);
  });

  it("stopped by its AbortSignal, streamed: a later run's input names its own calls only", async () => {
    const { s, agent, memory } = await abortedRun(true, "write two files");
    // The same Agent again: its model answers without a call.
    expect(await run(agent, "thanks", memory, true)).toBe("finished");
    const next = await inputOf(s, "thanks");
    expect(next.metadata).toEqual({ openaiAgentsItem: true });
    const edited = await s.edit(next.id, { content: "thank you" });
    expect(edited.undone).toEqual([]);
    expect((await s.toolTrack()).filter((t) => t.applied).map((t) => t.callId)).toEqual(["c1", "c2"]);
  });

  // Without an abortController the non-streamed Runner throws the refusal, saving nothing.
  for (const [stream, aborts] of [
    [true, false],
    [true, true],
    [false, true],
  ] as const) {
    const mode = `${stream ? "streamed" : "not streamed"}${aborts ? ", its abortController aborted" : ""}`;

    it(`stopped SESSION_MOVED by another handle's rollback: on the run's branch, an edit undoes its call (${mode})`, async () => {
      let s!: SessionHandle;
      let rollback!: () => Promise<unknown>;
      const abortController = aborts ? new AbortController() : undefined;
      const turns = [[functionCall("c1", "write_file", { path: "a.txt" })], [functionCall("c2", "write_file", { path: "b.txt" })]];
      const ctx = await setup(turns, {
        beforeTurn: async (turn) => {
          if (turn === 1) await rollback();
        },
        abortController,
      });
      ({ s } = ctx);
      await s.append({ role: "user", content: "hello" });
      const cp = await s.checkpoint({ name: "start" });
      const runBranch = (await s.info()).currentBranchId;
      rollback = async () => (await ctx.fp.getSession(s.id, { userId: "u" })).rollback(cp.id);
      const memory = new ForkpointSession(s);
      const outcome = await run(ctx.agent, "write two files", memory, stream, abortController?.signal);
      // Streamed, the stream may just end once its next call is refused; aborted, the Runner may say so.
      expect(["SESSION_MOVED", "finished", "AbortError"]).toContain(outcome);
      expect(ctx.exists("a.txt") || ctx.exists("b.txt")).toBe(false);

      // Back on the run's branch: its call is replayed, its input after it.
      await s.switchBranch(runBranch);
      expect(ctx.exists("a.txt")).toBe(true);
      const input = await inputOf(s, "write two files");
      expect((await s.plan({ messageId: input.id })).undone.map((t) => t.callId)).toEqual(["c1"]);
      const edited = await s.edit(input.id, { content: "write nothing" });
      expect(edited.undone.map((t) => t.callId)).toEqual(["c1"]);
      expect(ctx.exists("a.txt")).toBe(false);
      expect((await memory.getItems()).map((item) => (item as { content: unknown }).content)).toEqual(["hello", "write nothing"]);
    });
  }
});
