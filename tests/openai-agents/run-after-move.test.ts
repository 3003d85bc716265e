// A run in flight when the session moves (another handle or another server rolls back) saves its items on its own
// lineage, after what it was served: the branch the user rolled back to stays as it was, its undone calls off it.
import { Agent, Runner, setTracingDisabled, tool, type AgentInputItem, type OutputGuardrail } from "@openai/agents";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { defineTool, type SessionHandle } from "../../src/index.js";
import { ForkpointSession, undoableAgentTools } from "../../src/openai-agents/index.js";
import { openForkpoint } from "../fixtures/backend.js";
import { makeTempDir, removeDir, tempDatabases } from "../helpers.js";
import { ScriptedModel, functionCall, reply } from "./fake-model.js";

const dbs = tempDatabases();
const dirs: string[] = [];
beforeAll(() => setTracingDisabled(true));
afterEach(() => dirs.splice(0).forEach(removeDir));

/** Each item as [role or type, its text or call id]. */
const shown = (items: AgentInputItem[]) =>
  items.map((item) => {
    const o = item as { role?: string; type?: string; content?: unknown; callId?: string };
    const text = typeof o.content === "string" ? o.content : Array.isArray(o.content) ? (o.content[0] as { text: string }).text : o.callId;
    return [o.role ?? o.type, text];
  });

/** A branch's messages as items: the Agents items as added, `s.append`'s messages as easy input messages. */
const itemsOn = async (s: SessionHandle, branchId: string) =>
  (await s.history({ branchId })).map((m) =>
    m.metadata?.openaiAgentsItem === true ? (m.content as AgentInputItem) : ({ role: m.role, content: m.content } as AgentInputItem),
  );

const RUN_ITEMS = [
  ["user", "plan day 1"],
  ["function_call", "call-1"],
  ["function_call_result", "call-1"],
  ["assistant", "Planned day 1."],
];

/** A session with one message and a checkpoint after it (or before it), and an Agent that writes a file then answers. */
async function setup(checkpointFirst = false) {
  const dir = makeTempDir();
  dirs.push(dir);
  const file = join(dir, "plan.txt");
  const undo = () => rmSync(file, { force: true });
  const { fp, path } = dbs.open();
  // Another server, with the tool registered (`openForkpoint({ tools })`) so that its moves can undo its calls.
  const other = () => dbs.track(openForkpoint({ path, tools: [defineTool({ name: "write_plan", run: async () => "written", undo })] }));
  const s = await fp.createSession({ userId: "u" });
  const early = checkpointFirst ? await s.checkpoint({ name: "empty" }) : null;
  await s.append({ role: "user", content: "hello" });
  const cp = early ?? (await s.checkpoint({ name: "start" }));
  const startBranch = (await s.info()).currentBranchId;
  const writePlan = tool({
    name: "write_plan",
    description: "Write the plan",
    parameters: z.object({ text: z.string() }),
    execute: async ({ text }) => {
      writeFileSync(file, text);
      return "written";
    },
  });
  /**
   * Runs the Agent (streamed or not); `move` runs after its tool call, before its answer. `guarded`: an output
   * guardrail trips on the answer (the Runner then saves the run's items through a history transaction). `again`:
   * the model calls the tool again after the move instead of answering.
   */
  const run = async (move: (s: SessionHandle) => Promise<unknown>, stream = false, guarded = false, again = false) => {
    const abortController = new AbortController();
    const call = (id: string) => [functionCall(id, "write_plan", { text: "day 1" })];
    const model = new ScriptedModel(
      [call("call-1"), again ? call("call-2") : [reply("Planned day 1.")], [reply("Planned day 1.")]],
      async (turn) => {
        if (turn === 1) await move(s);
      },
    );
    const guardrail: OutputGuardrail = { name: "no-plans", execute: async () => ({ tripwireTriggered: true, outputInfo: null }) };
    const agent = new Agent({
      name: "p",
      model,
      tools: undoableAgentTools(s, [writePlan], { write_plan: undo }, { abortController }),
      outputGuardrails: guarded ? [guardrail] : [],
    });
    const memory = new ForkpointSession(s);
    const options = { session: memory, signal: abortController.signal };
    const running = stream
      ? new Runner().run(agent, "plan day 1", { ...options, stream: true }).then(async (streamed) => {
          for await (const _event of streamed) void _event;
          await streamed.completed;
        })
      : new Runner().run(agent, "plan day 1", options);
    const outcome = await running.then(
      () => "finished",
      (e: { code?: string; constructor: { name: string } }) => e.code ?? e.constructor.name,
    );
    return { outcome, memory };
  };
  return { fp, other, s, cp, file, startBranch, run };
}

describe("a run in flight when the session moves", () => {
  it("another handle's rollback: the run stops and its items stay off the branch rolled back to", async () => {
    const { fp, s, cp, file, startBranch, run } = await setup();
    const { outcome, memory } = await run(async () => (await fp.getSession(s.id, { userId: "u" })).rollback(cp.id));
    expect(outcome).toBe("SESSION_MOVED");
    expect(shown(await memory.getItems())).toEqual([["user", "hello"]]);
    expect(await s.toolTrack()).toEqual([]);
    expect(existsSync(file)).toBe(false);
    // The run's items went where the run was: after its tool call on the branch it started on.
    expect(shown(await itemsOn(s, startBranch))).toEqual([["user", "hello"], ...RUN_ITEMS]);
  });

  it("streamed, another handle's rollback: the run stops, its input goes after its call on its branch, not the one rolled back to", async () => {
    const { fp, s, cp, file, startBranch, run } = await setup();
    const { outcome, memory } = await run(async () => (await fp.getSession(s.id, { userId: "u" })).rollback(cp.id), true, false, true);
    // Stopped (aborted: the stream just ends) once its next call is refused.
    expect(["SESSION_MOVED", "finished"]).toContain(outcome);
    expect(shown(await memory.getItems())).toEqual([["user", "hello"]]);
    expect(shown(await itemsOn(s, (await s.info()).currentBranchId))).toEqual([["user", "hello"]]);
    expect(await s.toolTrack()).toEqual([]);
    expect(existsSync(file)).toBe(false);
    // The run saved what it got to (its input at least) on the branch it started on, after its call.
    const onRunBranch = await s.history({ branchId: startBranch });
    expect(shown(await itemsOn(s, startBranch)).slice(0, 2)).toEqual([["user", "hello"], RUN_ITEMS[0]]);
    const call = (await s.toolTrack({ branchId: startBranch })).find((t) => t.callId === "call-1")!;
    expect(call.position).toBeLessThan(onRunBranch[1]!.position);
  });

  it.each([false, true])("another server's rollback: the run finishes, the branch rolled back to stays (stream: %s)", async (stream) => {
    const { other, s, cp, file, startBranch, run } = await setup();
    const { outcome, memory } = await run(async () => (await other().getSession(s.id, { userId: "u" })).rollback(cp.id), stream);
    expect(outcome).toBe("finished");
    expect(shown(await memory.getItems())).toEqual([["user", "hello"]]);
    expect((await s.branches()).find((b) => b.current)!.forkCheckpointId).toBe(cp.id);
    expect(await s.toolTrack()).toEqual([]);
    expect(existsSync(file)).toBe(false);
    expect(shown(await itemsOn(s, startBranch))).toEqual([["user", "hello"], ...RUN_ITEMS]);
    // Switching back to the run's branch brings its call back with its items.
    await s.switchBranch(startBranch);
    expect(shown(await memory.getItems())).toEqual([["user", "hello"], ...RUN_ITEMS]);
    expect(existsSync(file)).toBe(true);
  });

  it("a run an output guardrail stopped: its items, saved by a history transaction, stay off the branch rolled back to", async () => {
    const { other, s, cp, file, startBranch, run } = await setup();
    const { outcome, memory } = await run(async () => (await other().getSession(s.id, { userId: "u" })).rollback(cp.id), false, true);
    expect(outcome).toBe("OutputGuardrailTripwireTriggered");
    expect(shown(await memory.getItems())).toEqual([["user", "hello"]]);
    expect(await s.toolTrack()).toEqual([]);
    expect(existsSync(file)).toBe(false);
    // The stopped answer is not saved; the run's input and call are, after its call on its branch.
    expect(shown(await itemsOn(s, startBranch))).toEqual([["user", "hello"], ...RUN_ITEMS.slice(0, 3)]);
  });

  it("by hand: an append_items transaction after a rollback elsewhere follows what was read, and so does addItems", async () => {
    const { other, s, cp, startBranch } = await setup();
    const memory = new ForkpointSession(s);
    await memory.getItems();
    await memory.addItems([{ role: "user", content: "a" }]);
    await (await other().getSession(s.id, { userId: "u" })).rollback(cp.id);
    const b = { role: "user" as const, content: "b" };
    await memory.applyHistoryTransaction({ operationId: "op-b", transaction: { type: "append_items", items: [b] } });
    // Retried (a resumed run): nothing more is written, and what follows still goes after "b".
    await memory.applyHistoryTransaction({ operationId: "op-b", transaction: { type: "append_items", items: [b] } });
    await memory.addItems([{ role: "user", content: "c" }]);
    expect(shown(await itemsOn(s, (await s.info()).currentBranchId))).toEqual([["user", "hello"]]);
    expect(shown(await itemsOn(s, startBranch))).toEqual([
      ["user", "hello"],
      ["user", "a"],
      ["user", "b"],
      ["user", "c"],
    ]);
  });

  it("a rollback to before what the run was served: its items stay on its branch, the empty one stays empty", async () => {
    const { other, s, cp, startBranch, run } = await setup(true);
    const { memory } = await run(async () => (await other().getSession(s.id, { userId: "u" })).rollback(cp.id));
    expect(await memory.getItems()).toEqual([]);
    expect(await s.toolTrack()).toEqual([]);
    expect(shown(await itemsOn(s, startBranch))).toEqual([["user", "hello"], ...RUN_ITEMS]);
  });

  it("a write on the run's branch meanwhile (no move): its items go on after it, as before", async () => {
    const { fp, s, startBranch, run } = await setup();
    const { outcome, memory } = await run(async () =>
      (await fp.getSession(s.id, { userId: "u" })).append({ role: "user", content: "aside" }),
    );
    expect(outcome).toBe("finished");
    expect((await s.info()).currentBranchId).toBe(startBranch);
    expect(shown(await memory.getItems())).toEqual([["user", "hello"], ["user", "aside"], ...RUN_ITEMS]);
    expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["call-1"]);
  });

  it("by hand: a pop elsewhere of the item last added puts the next after it; getItems or a new session follows the move", async () => {
    const { fp, s } = await setup();
    const memory = new ForkpointSession(s);
    const other = new ForkpointSession(await fp.getSession(s.id, { userId: "u" }));
    await memory.addItems([{ role: "user", content: "a" }]);
    expect(await other.popItem()).toEqual({ role: "user", content: "a" });
    await memory.addItems([{ role: "user", content: "b" }]);
    // The current branch is the pop's; "b" followed "a", its writer's last item, on a's branch.
    expect(shown(await other.getItems())).toEqual([["user", "hello"]]);
    const [b] = (await s.history({ branchId: (await s.branches()).find((x) => !x.current && x.parentId === null)!.id })).slice(-1);
    expect(b!.content).toEqual({ role: "user", content: "b" });
    // A session never read from, or one read again, goes on from the current branch.
    await new ForkpointSession(s).addItems([{ role: "user", content: "c" }]);
    await memory.getItems();
    await memory.addItems([{ role: "user", content: "d" }]);
    expect(shown(await other.getItems())).toEqual([
      ["user", "hello"],
      ["user", "c"],
      ["user", "d"],
    ]);
  });

  it.each([
    ["popItem", "the run's handle"],
    ["clearSession", "the run's handle"],
    ["popItem", "another handle"],
    ["clearSession", "another handle"],
  ] as const)("another ForkpointSession's %s on %s mid-run stops the run's later calls", async (how, on) => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const world = new Set<string>();
    const put = tool({
      name: "put",
      description: "Put a key",
      parameters: z.object({ k: z.string() }),
      execute: async ({ k }) => (world.add(k), "ok"),
    });
    const abortController = new AbortController();
    const memory = new ForkpointSession(s);
    const other = new ForkpointSession(on === "another handle" ? await fp.getSession(s.id, { userId: "u" }) : s);
    const model = new ScriptedModel(
      [
        [reply("first answer")],
        [functionCall("c1", "put", { k: "one" })],
        [functionCall("c2", "put", { k: "two" })],
        // The next run's (the run above stops at c2).
        [functionCall("c3", "put", { k: "three" })],
        [reply("put three")],
      ],
      async (turn) => {
        if (turn !== 2) return;
        await other.getItems();
        await other[how]();
      },
    );
    const agent = new Agent({
      name: "p",
      model,
      tools: undoableAgentTools(s, [put], { put: ({ args }) => void world.delete((args as { k: string }).k) }, { abortController }),
    });
    const runner = new Runner();
    await runner.run(agent, "q0", { session: memory });
    const outcome = await runner.run(agent, "q1", { session: memory, signal: abortController.signal }).then(
      () => "finished",
      (e: { code?: string }) => e.code ?? "rejected",
    );
    expect(outcome).toBe("SESSION_MOVED");
    // c1 was undone by the move; c2 never ran, on either branch.
    expect([...world]).toEqual([]);
    expect(await s.toolTrack()).toEqual([]);
    for (const b of await s.branches()) expect((await s.toolTrack({ branchId: b.id })).map((t) => t.callId)).not.toContain("c2");
    expect(shown(await other.getItems())).toEqual(how === "popItem" ? [["user", "q0"]] : []);
    // A run started after the move goes on from the branch moved to, with the same Agent.
    const next = await runner.run(agent, "q2", { session: new ForkpointSession(s) });
    expect(next.finalOutput).toBe("put three");
    expect([...world]).toEqual(["three"]);
    expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["c3"]);
  });

  it("the run's own ForkpointSession's pop mid-run: its later calls go on from the new branch", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const world = new Set<string>();
    const put = tool({
      name: "put",
      description: "Put a key",
      parameters: z.object({ k: z.string() }),
      execute: async ({ k }) => (world.add(k), "ok"),
    });
    const memory = new ForkpointSession(s);
    const model = new ScriptedModel(
      [[reply("first answer")], [functionCall("c1", "put", { k: "one" })], [functionCall("c2", "put", { k: "two" })], [reply("done")]],
      async (turn) => {
        if (turn === 2) await memory.popItem();
      },
    );
    const agent = new Agent({
      name: "p",
      model,
      tools: undoableAgentTools(s, [put], { put: ({ args }) => void world.delete((args as { k: string }).k) }),
    });
    const runner = new Runner();
    await runner.run(agent, "q0", { session: memory });
    expect((await runner.run(agent, "q1", { session: memory })).finalOutput).toBe("done");
    expect([...world]).toEqual(["two"]);
    expect((await s.toolTrack()).map((t) => t.callId)).toEqual(["c2"]);
  });
});
