// forkpoint/openai-agents: an Agent run by a Runner on a scripted model, with ForkpointSession as its memory and
// function tools that write real files; popItem and clearSession fork (the old branch stays), tools undo and replay.
import { Agent, Runner, setTracingDisabled, tool, type AgentInputItem } from "@openai/agents";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ConflictError, ValidationError } from "../../src/index.js";
import { ForkpointSession, undoableAgentTools } from "../../src/openai-agents/index.js";
import { makeTempDir, removeDir, tempDatabases } from "../helpers.js";
import { ScriptedModel, functionCall, reply } from "./fake-model.js";
import { dumpOf } from "../fixtures/backend.js";

const dbs = tempDatabases();
const dirs: string[] = [];
beforeAll(() => setTracingDisabled(true));
afterEach(() => dirs.splice(0).forEach(removeDir));

function writeFileTool(dir: string) {
  return tool({
    name: "write_file",
    description: "Write a file",
    parameters: z.object({ path: z.string(), text: z.string() }),
    execute: async ({ path, text }) => {
      writeFileSync(join(dir, path), text);
      return `wrote ${path}`;
    },
  });
}

async function setup() {
  const dir = makeTempDir();
  dirs.push(dir);
  const { fp, path } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  return { dir, fp, s, path, memory: new ForkpointSession(s) };
}

const user = (content: string): AgentInputItem => ({ role: "user", content });

describe("ForkpointSession", () => {
  it("is the Agents SDK's memory: items stored one message each and returned exactly as added", async () => {
    const { s, memory } = await setup();
    expect(await memory.getSessionId()).toBe(s.id);
    expect(await memory.getItems()).toEqual([]);
    expect(await memory.popItem()).toBeUndefined();
    const items: AgentInputItem[] = [
      user("hi"),
      {
        type: "message",
        role: "assistant",
        status: "completed",
        content: [{ type: "output_text", text: "hello", providerData: { annotations: [] } }],
      },
      { type: "function_call", callId: "c1", name: "f", arguments: '{"a":1}', status: "completed", providerData: { x: [1, null] } },
      { type: "function_call_result", callId: "c1", name: "f", status: "completed", output: { type: "text", text: "ok" } },
    ];
    await memory.addItems(items);
    expect(await memory.getItems()).toEqual(items);
    expect(await memory.getItems(2)).toEqual(items.slice(2));
    expect(await memory.getItems(0)).toEqual([]);
    expect((await s.history()).map((m) => m.role)).toEqual(["user", "assistant", "function_call", "function_call_result"]);
  });

  it("popItem and clearSession fork a new branch; the old one keeps every item", async () => {
    const { s, memory } = await setup();
    await memory.addItems([user("one"), user("two"), user("three")]);
    const first = (await s.info()).currentBranchId;
    expect(await memory.popItem()).toEqual(user("three"));
    expect(await memory.getItems()).toEqual([user("one"), user("two")]);
    const afterPop = (await s.info()).currentBranchId;
    expect(afterPop).not.toBe(first);
    expect((await s.history({ branchId: first })).map((m) => m.content)).toHaveLength(3);

    await memory.clearSession();
    expect(await memory.getItems()).toEqual([]);
    expect(await s.branches()).toHaveLength(3);
    expect((await s.history({ branchId: afterPop })).length).toBe(2);
    // The old branches are still there to switch back to.
    await s.switchBranch(first);
    expect(await memory.getItems()).toHaveLength(3);
  });

  it("a session popped and cleared exports, verifies and imports like any other", async () => {
    const { fp, s, memory } = await setup();
    await memory.addItems([user("a"), user("b")]);
    await memory.popItem();
    await memory.clearSession();
    const shape = (branches: { reason: string; forkCheckpointId: string | null; forkPosition: number }[]) =>
      branches.map((b) => [b.reason, b.forkCheckpointId, b.forkPosition]);
    const source = shape(await s.branches());
    expect(source).toEqual([
      ["root", null, 0],
      ["edit", null, 1],
      ["edit", null, 0],
    ]);
    const other = dbs.open().fp;
    const copy = await other.importSession(await fp.exportSession(s.id, { userId: "u" }), { userId: "u" });
    expect(shape(await copy.branches())).toEqual(source);
    expect((await other.verify()).ok).toBe(true);
  });

  it("an Agent run by a Runner keeps its conversation in the session and its file writes undoable", async () => {
    const { dir, s, memory } = await setup();
    const model = new ScriptedModel([
      [functionCall("call-1", "write_file", { path: "a.txt", text: "A" })],
      [reply("Wrote a.txt.")],
      [functionCall("call-2", "write_file", { path: "b.txt", text: "B" })],
      [reply("Wrote b.txt.")],
    ]);
    const start = await s.checkpoint({ name: "start" });
    const agent = new Agent({
      name: "writer",
      instructions: "Write files.",
      model,
      tools: undoableAgentTools(s, [writeFileTool(dir)], { write_file: ({ args }) => rmSync(join(dir, (args as { path: string }).path)) }),
    });
    const runner = new Runner();
    const r1 = await runner.run(agent, "write a", { session: memory });
    expect(r1.finalOutput).toBe("Wrote a.txt.");
    const r2 = await runner.run(agent, "write b", { session: memory });
    expect(r2.finalOutput).toBe("Wrote b.txt.");
    expect(readFileSync(join(dir, "b.txt"), "utf8")).toBe("B");
    // The second turn's model call saw the first turn's items, read back from the session.
    expect(JSON.stringify(model.requests[2]!.input)).toContain("Wrote a.txt.");
    const items = await memory.getItems();
    expect(items.filter((i) => "role" in i && i.role === "user").map((i) => (i as { content: string }).content)).toEqual([
      "write a",
      "write b",
    ]);
    expect((await s.toolTrack()).map((t) => [t.tool, t.callId, t.args])).toEqual([
      ["write_file", "call-1", { path: "a.txt", text: "A" }],
      ["write_file", "call-2", { path: "b.txt", text: "B" }],
    ]);

    // Popping the last run's items (back to its input) forks before them; its file write is undone with them.
    const runBranch = (await s.info()).currentBranchId;
    let popped: AgentInputItem | undefined;
    do popped = await memory.popItem();
    while (popped && !("role" in popped && popped.role === "user"));
    expect(existsSync(join(dir, "b.txt"))).toBe(false);
    expect(readFileSync(join(dir, "a.txt"), "utf8")).toBe("A");

    // Switching back replays it through the tool itself; clearing undoes everything.
    const back = await s.switchBranch(runBranch);
    expect(back.replayed.map((t) => t.callId)).toEqual(["call-2"]);
    expect(readFileSync(join(dir, "b.txt"), "utf8")).toBe("B");
    await memory.clearSession();
    expect(existsSync(join(dir, "a.txt")) || existsSync(join(dir, "b.txt"))).toBe(false);
    expect(await memory.getItems()).toEqual([]);
    // The checkpoint taken before both runs is on every branch's lineage: rolling back to it moves nothing.
    expect((await s.rollback(start.id)).undone).toEqual([]);
  });

  it("a streamed run works the same: its input is saved after its calls, so popping the input undoes them", async () => {
    const { dir, s, memory } = await setup();
    const model = new ScriptedModel([[functionCall("sc-1", "write_file", { path: "s.txt", text: "S" })], [reply("ok")]]);
    const agent = new Agent({
      name: "w",
      model,
      tools: undoableAgentTools(s, [writeFileTool(dir)], { write_file: ({ args }) => rmSync(join(dir, (args as { path: string }).path)) }),
    });
    const streamed = await new Runner().run(agent, "stream it", { session: memory, stream: true });
    for await (const _event of streamed) void _event;
    await streamed.completed;
    expect(streamed.finalOutput).toBe("ok");
    const [input] = await s.history();
    const [call] = await s.toolTrack();
    expect(call!.position).toBeLessThan(input!.position);
    while ((await memory.getItems()).length > 1) await memory.popItem();
    const [saved] = await memory.getItems();
    expect(saved).toMatchObject(user("stream it"));
    expect(readFileSync(join(dir, "s.txt"), "utf8")).toBe("S");
    expect(await memory.popItem()).toEqual(saved);
    expect(existsSync(join(dir, "s.txt"))).toBe(false);
  });

  it("the same Agent runs again after popItem and clearSession: its tools go on from the new branch", async () => {
    const { dir, s, memory } = await setup();
    const model = new ScriptedModel([
      [functionCall("c1", "write_file", { path: "a.txt", text: "A" })],
      [reply("wrote a")],
      [functionCall("c2", "write_file", { path: "b.txt", text: "B" })],
      [reply("wrote b")],
      [functionCall("c3", "write_file", { path: "c.txt", text: "C" })],
      [reply("wrote c")],
    ]);
    const agent = new Agent({
      name: "w",
      model,
      tools: undoableAgentTools(s, [writeFileTool(dir)], { write_file: ({ args }) => rmSync(join(dir, (args as { path: string }).path)) }),
    });
    const runner = new Runner();
    await runner.run(agent, "write a", { session: memory });
    // "Undo the last answer": pop it, then ask again with the same agent.
    await memory.popItem();
    expect((await runner.run(agent, "write b", { session: memory })).finalOutput).toBe("wrote b");
    expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["c1", "c2"]);
    await memory.clearSession();
    expect((await runner.run(agent, "write c", { session: memory })).finalOutput).toBe("wrote c");
    expect([existsSync(join(dir, "a.txt")), existsSync(join(dir, "b.txt")), readFileSync(join(dir, "c.txt"), "utf8")]).toEqual([
      false,
      false,
      "C",
    ]);
    expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["c3"]);
  });

  it("a rollback during a run refuses the run's further tool calls and aborts its signal", async () => {
    const { dir, s, memory } = await setup();
    const start = await s.checkpoint();
    const abortController = new AbortController();
    const model = new ScriptedModel(
      [
        [functionCall("c1", "write_file", { path: "one.txt", text: "1" })],
        [functionCall("c2", "write_file", { path: "two.txt", text: "2" })],
        [reply("done")],
      ],
      async (turn) => {
        if (turn === 1) await s.rollback(start.id);
      },
    );
    const agent = new Agent({
      name: "w",
      model,
      tools: undoableAgentTools(
        s,
        [writeFileTool(dir)],
        { write_file: ({ args }) => rmSync(join(dir, (args as { path: string }).path)) },
        { abortController },
      ),
    });
    await expect(new Runner().run(agent, "go", { session: memory, signal: abortController.signal })).rejects.toThrow();
    expect((abortController.signal.reason as ConflictError).code).toBe("SESSION_MOVED");
    expect(existsSync(join(dir, "one.txt")) || existsSync(join(dir, "two.txt"))).toBe(false);
    expect(await s.toolTrack()).toEqual([]);
  });

  it("a tool that throws is recorded as failed (the model sees the SDK's fixed error text), so no move undoes it", async () => {
    const { dir, s, memory } = await setup();
    const start = await s.checkpoint();
    const undone: string[] = [];
    const model = new ScriptedModel([[functionCall("bad", "write_file", { path: "no/such/dir/a.txt", text: "A" })], [reply("could not")]]);
    const agent = new Agent({
      name: "w",
      model,
      tools: undoableAgentTools(s, [writeFileTool(dir)], { write_file: ({ args }) => void undone.push((args as { path: string }).path) }),
    });
    const run = await new Runner().run(agent, "write", { session: memory });
    expect(run.finalOutput).toBe("could not");
    // 0.20 tells the model a fixed text and keeps the thrown error to itself: the call records that text.
    const sdkText = "An error occurred while running the tool. Please try again.";
    expect(JSON.stringify(model.requests[1]!.input)).toContain(sdkText);
    const [call] = await s.toolTrack();
    expect([call!.status, call!.error?.message, call!.applied]).toEqual(["failed", sdkText, false]);
    const back = await s.rollback(start.id);
    expect([back.undone, undone]).toEqual([[], []]);
  });

  it("a tool whose output only mentions that text succeeded; a custom errorFunction's failures are told by failedOutput", async () => {
    const { s, memory } = await setup();
    const start = await s.checkpoint();
    const undone: string[] = [];
    const quote = tool({
      name: "quote",
      description: "Quote the SDK",
      parameters: z.object({}),
      execute: async () => "The SDK says: An error occurred while running the tool. Please try again.",
    });
    const fragile = tool({
      name: "fragile",
      description: "Fails with its own message",
      parameters: z.object({}),
      execute: async () => {
        throw new Error("disk full");
      },
      errorFunction: (_ctx, error) => `FAILED: ${(error as Error).message}`,
    });
    const model = new ScriptedModel([[functionCall("q1", "quote", {}), functionCall("f1", "fragile", {})], [reply("ok")]]);
    const agent = new Agent({
      name: "w",
      model,
      tools: undoableAgentTools(
        s,
        [quote, fragile],
        { quote: () => void undone.push("quote"), fragile: () => void undone.push("fragile") },
        { failedOutput: (output) => typeof output === "string" && output.startsWith("FAILED: ") },
      ),
    });
    await new Runner().run(agent, "go", { session: memory });
    expect(JSON.stringify(model.requests[1]!.input)).toContain("FAILED: disk full");
    const track = await s.toolTrack();
    expect(track.map((t) => [t.callId, t.status, t.error?.message ?? null])).toEqual([
      ["q1", "succeeded", null],
      ["f1", "failed", "FAILED: disk full"],
    ]);
    await s.rollback(start.id);
    expect(undone).toEqual(["quote"]);
  });

  it("refuses bad input with a ValidationError and writes nothing", async () => {
    const { s, memory, path } = await setup();
    await memory.addItems([user("hi")]);
    const dump = await dumpOf(path);
    await expect(memory.addItems([{ content: "no role" } as never])).rejects.toBeInstanceOf(ValidationError);
    await expect(memory.addItems([user("ok"), { role: "user", content: () => 1 } as never])).rejects.toBeInstanceOf(ValidationError);
    await expect(memory.getItems(-1)).rejects.toBeInstanceOf(ValidationError);
    expect(() => new ForkpointSession({} as never)).toThrow(ValidationError);
    expect(() => undoableAgentTools(s, [], { nope: () => {} })).toThrow(/names no function tool/);
    expect(() => undoableAgentTools(s, [], {}, { failedOutput: "yes" as never })).toThrow(ValidationError);
    expect(await dumpOf(path)).toEqual(dump);
  });
});
