// An edit of an Agents run's input while other writers wrote during the run: two runs at once on one session (one
// ForkpointSession, or two handles), or a message another handle added while the run ran. The edit undoes every call
// the run made, or, when forking before them would leave out a message another run or writer added after them, is
// refused (ConflictError RUN_INTERLEAVED) with nothing changed: never a fork that leaves some of the run's calls applied.
import { Agent, Runner, Usage, tool, type Model, type ModelRequest, type ModelResponse, type StreamEvent } from "@openai/agents";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ConflictError, type SessionHandle } from "../../src/index.js";
import { ForkpointSession, undoableAgentTools } from "../../src/openai-agents/index.js";
import { tempDatabases } from "../helpers.js";
import { functionCall, reply } from "./fake-model.js";

const dbs = tempDatabases();

/** Resolves once `ready()` holds (checked every few milliseconds): orders the runs' turns, never by time. */
async function until(ready: () => boolean): Promise<void> {
  while (!ready()) await new Promise((resolve) => setTimeout(resolve, 3));
}

/**
 * A model serving every run: each run (told by its input, the last user item) calls `put` twice, `k` = its input and
 * the call's index, then answers. `gate(input, turn)` holds a turn back until the script allows it.
 */
function puttingModel(gate: (input: string, turn: number) => Promise<void>): Model {
  const model: Model = {
    async getResponse(request: ModelRequest): Promise<ModelResponse> {
      const items = (Array.isArray(request.input) ? request.input : []) as { role?: string; type?: string; content?: unknown }[];
      const mine = items.slice(items.map((i) => i.role).lastIndexOf("user"));
      const input = String(mine[0]?.content);
      const turn = mine.filter((i) => i.type === "function_call").length;
      await gate(input, turn);
      const output = turn < 2 ? [functionCall(`c-${input}-${turn}`, "put", { k: `${input}${turn}` })] : [reply(`done ${input}`)];
      return { usage: new Usage(), output };
    },
    /** Streams each turn as one `response_done` event holding its output. */
    async *getStreamedResponse(request: ModelRequest): AsyncIterable<StreamEvent> {
      const { output } = await model.getResponse(request);
      const usage = { inputTokens: 1, outputTokens: 1, totalTokens: 2 };
      yield { type: "response_done", response: { id: "resp", usage, output: output as never } };
    },
  };
  return model;
}

/** An agent whose `put` tool adds to `world`, undoably on `s`. */
function putter(s: SessionHandle, world: Set<string>, model: Model): Agent {
  const put = tool({
    name: "put",
    description: "Put a key",
    parameters: z.object({ k: z.string() }),
    execute: async ({ k }) => (world.add(k), `ok ${k}`),
  });
  const undos = { put: ({ args }: { args: { k: string } }) => void world.delete(args.k) };
  return new Agent({ name: "putter", model, tools: undoableAgentTools(s, [put], undos) });
}

async function run(agent: Agent, input: string, session: ForkpointSession, stream = false): Promise<void> {
  const runner = new Runner({ tracingDisabled: true });
  if (!stream) return void (await runner.run(agent, input, { session }));
  const streamed = await runner.run(agent, input, { session, stream: true });
  for await (const _ of streamed);
  await streamed.completed;
}

const inputOf = async (s: SessionHandle, text: string) =>
  (await s.history()).find((m) => m.role === "user" && (m.content as { content?: unknown }).content === text)!;

const brief = async (s: SessionHandle) =>
  (await new ForkpointSession(s).getItems()).map((i) =>
    "role" in i ? `${i.role}:${typeof i.content === "string" ? i.content : ".."}` : i.type,
  );

/** What the session is, to compare before and after a refused edit. */
const snapshot = async (s: SessionHandle) => ({
  info: (await s.info()).currentBranchId,
  branches: (await s.branches()).map((b) => b.id),
  items: await brief(s),
  track: (await s.toolTrack()).map((t) => t.callId),
});

/**
 * Runs X and Y at once on one session (one ForkpointSession, or one per handle): the log becomes X0 Y0 X1 Y1, then X's
 * items, then Y's (Y's first with `ySavesFirst`), each turn waiting for the other run's call before it.
 */
async function twoRunsAtOnce(handles: "one ForkpointSession" | "two handles", stream = false, ySavesFirst = false) {
  const { fp, path } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  const other = handles === "two handles" ? await dbs.open({ path }).fp.getSession(s.id, { userId: "u" }) : s;
  const world = new Set<string>();
  const done = new Set<string>();
  const model = puttingModel(async (input, turn) => {
    if (input === "X" && turn > 0) await until(() => world.has(`Y${turn - 1}`));
    if (input === "Y" && turn < 2) await until(() => world.has(`X${turn}`));
    if (turn === 2 && input === (ySavesFirst ? "X" : "Y")) await until(() => done.has(ySavesFirst ? "Y" : "X"));
  });
  const mx = new ForkpointSession(s);
  const my = handles === "two handles" ? new ForkpointSession(other) : mx;
  await Promise.all([
    run(putter(s, world, model), "X", mx, stream).then(() => void done.add("X")),
    run(putter(other, world, model), "Y", my, stream).then(() => void done.add("Y")),
  ]);
  return { s, world };
}

describe("an edit of an Agents run's input, other writers having written during the run", () => {
  for (const [handles, stream] of [
    ["one ForkpointSession", false],
    ["two handles", false],
    ["one ForkpointSession", true],
  ] as const) {
    it(`two runs at once (${handles}${stream ? ", streamed" : ""}): X's input edit undoes all; Y's is refused`, async () => {
      const { s, world } = await twoRunsAtOnce(handles, stream);
      expect(await brief(s)).toEqual([
        "user:X",
        "function_call",
        "function_call_result",
        "function_call",
        "function_call_result",
        "assistant:..",
        "user:Y",
        "function_call",
        "function_call_result",
        "function_call",
        "function_call_result",
        "assistant:..",
      ]);
      expect([...world].sort()).toEqual(["X0", "X1", "Y0", "Y1"]);

      // Y's calls were made before X's items landed: forking before them would leave X's exchange out, forking after
      // it would leave them applied. Refused, before anything moved; the plan says the same.
      const before = await snapshot(s);
      const y = await inputOf(s, "Y");
      const refused = await s.edit(y.id, { content: "Y edited" }).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(ConflictError);
      expect(refused).toMatchObject({ code: "RUN_INTERLEAVED" });
      expect(String((refused as Error).message)).toContain("c-Y-0");
      await expect(s.plan({ messageId: y.id })).rejects.toMatchObject({ code: "RUN_INTERLEAVED" });
      expect(await snapshot(s)).toEqual(before);
      expect([...world].sort()).toEqual(["X0", "X1", "Y0", "Y1"]);

      // X's input: every call of both runs came after the message X read, so all are undone (Y's exchange followed).
      const x = await s.edit((await inputOf(s, "X")).id, { content: "X edited" });
      expect(x.undone.map((c) => c.callId).sort()).toEqual(["c-X-0", "c-X-1", "c-Y-0", "c-Y-1"]);
      expect(world.size).toBe(0);
    });
  }

  it("two runs at once, Y's items first: Y's input edit undoes both runs' calls, X's items left out; X's is refused", async () => {
    const { s, world } = await twoRunsAtOnce("two handles", false, true);
    expect((await brief(s)).filter((item) => item.startsWith("user"))).toEqual(["user:Y", "user:X"]);
    const x = await inputOf(s, "X");
    await expect(s.edit(x.id, { content: "X edited" })).rejects.toMatchObject({ code: "RUN_INTERLEAVED" });
    expect([...world].sort()).toEqual(["X0", "X1", "Y0", "Y1"]);

    // Y's edit leaves X's items out (they followed Y's): X's calls, journaled among Y's with no message between, go too.
    expect((await s.plan({ messageId: (await inputOf(s, "Y")).id })).undone.map((c) => c.callId).sort()).toEqual([
      "c-X-0",
      "c-X-1",
      "c-Y-0",
      "c-Y-1",
    ]);
    const y = await s.edit((await inputOf(s, "Y")).id, { content: "Y edited" });
    expect(y.undone.map((c) => c.callId).sort()).toEqual(["c-X-0", "c-X-1", "c-Y-0", "c-Y-1"]);
    expect(world.size).toBe(0);
    expect(await brief(s)).toEqual(["user:Y edited"]);
  });

  it("popping back to the later run's input: its calls stay applied through its items' pops, its input's is refused", async () => {
    const { s, world } = await twoRunsAtOnce("two handles");
    const memory = new ForkpointSession(s);
    // The answer, then each result and call: the calls were journaled before the run's input, so they stay applied.
    for (let i = 0; i < 5; i++) await memory.popItem();
    expect((await brief(s)).at(-1)).toBe("user:Y");
    expect([...world].sort()).toEqual(["X0", "X1", "Y0", "Y1"]);
    // The input: forking right after X's answer would leave Y's calls applied, forking before them would drop X's items.
    const before = await snapshot(s);
    await expect(memory.popItem()).rejects.toMatchObject({ name: "ConflictError", code: "RUN_INTERLEAVED" });
    expect(await snapshot(s)).toEqual(before);
    // Cleared: every call is undone.
    await memory.clearSession();
    expect(world.size).toBe(0);
  });

  it("a run that started after another's items landed: editing it undoes its calls only, the other's stay", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const world = new Set<string>();
    let xDone = false;
    // Y reads the session before X saved, but calls only once X's items landed.
    const model = puttingModel(async (input, turn) => {
      if (input === "Y" && turn === 0) await until(() => xDone);
    });
    const memory = new ForkpointSession(s);
    await Promise.all([
      run(putter(s, world, model), "X", memory).then(() => void (xDone = true)),
      run(putter(s, world, model), "Y", memory),
    ]);
    const y = await s.edit((await inputOf(s, "Y")).id, { content: "Y edited" });
    expect(y.undone.map((c) => c.callId).sort()).toEqual(["c-Y-0", "c-Y-1"]);
    expect([...world].sort()).toEqual(["X0", "X1"]);
    expect((await brief(s)).slice(-2)).toEqual(["assistant:..", "user:Y edited"]);
  });

  it("a message another handle adds while the run runs, between its calls: the edit is refused, nothing changed", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const other = await fp.getSession(s.id, { userId: "u" });
    const world = new Set<string>();
    const model = puttingModel(async (input, turn) => {
      if (input === "B" && turn === 1) await new ForkpointSession(other).addItems([{ role: "user", content: "interjection" }]);
    });
    const memory = new ForkpointSession(s);
    await run(putter(s, world, model), "A", memory);
    await run(putter(s, world, model), "B", memory);
    expect((await brief(s)).slice(6, 8)).toEqual(["user:interjection", "user:B"]);

    const before = await snapshot(s);
    const b = await inputOf(s, "B");
    await expect(s.edit(b.id, { content: "B edited" })).rejects.toMatchObject({ name: "ConflictError", code: "RUN_INTERLEAVED" });
    expect(await snapshot(s)).toEqual(before);
    expect([...world].sort()).toEqual(["A0", "A1", "B0", "B1"]);

    // A's input, before all of it: the edit goes ahead and undoes both runs' calls.
    const a = await s.edit((await inputOf(s, "A")).id, { content: "A edited" });
    expect(a.undone.map((c) => c.callId).sort()).toEqual(["c-A-0", "c-A-1", "c-B-0", "c-B-1"]);
    expect(world.size).toBe(0);
  });
});
