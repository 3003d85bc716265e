// ForkpointSession.applyHistoryTransaction (the Agents SDK 0.20 SessionHistoryTransactionAwareSession): atomic, applied
// once per operation id from any handle or process, a suffix replaced by a fork (never destructively), a mismatch or a
// reused id refused with nothing changed; and the Runner's own use of it around an output guardrail.
import {
  Agent,
  Runner,
  setTracingDisabled,
  tool,
  type AgentInputItem,
  type OutputGuardrail,
  type SessionHistoryTransactionArgs,
} from "@openai/agents";
import { beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ConflictError, ValidationError, defineTool } from "../../src/index.js";
import { ForkpointSession, undoableAgentTools } from "../../src/openai-agents/index.js";
import { dumpOf, openForkpoint } from "../fixtures/backend.js";
import { rejectionOf, tempDatabases } from "../helpers.js";
import { ScriptedModel, functionCall, reply } from "./fake-model.js";
import { sessionWorker } from "./worker-driver.js";

const dbs = tempDatabases();
beforeAll(() => setTracingDisabled(true));

const user = (content: string): AgentInputItem => ({ type: "message", role: "user", content });
const said = (text: string): AgentInputItem => ({
  type: "message",
  role: "assistant",
  status: "completed",
  content: [{ type: "output_text", text }],
});
const call = (callId: string): AgentInputItem => ({ type: "function_call", callId, name: "note", arguments: "{}", status: "completed" });
const result = (callId: string): AgentInputItem => ({
  type: "function_call_result",
  callId,
  name: "note",
  status: "completed",
  output: { type: "text", text: "ok" },
});
const append = (operationId: string, items: AgentInputItem[]): SessionHistoryTransactionArgs => ({
  operationId,
  transaction: { type: "append_items", items },
});
const replace = (operationId: string, expectedSuffix: AgentInputItem[], replacement: AgentInputItem[]): SessionHistoryTransactionArgs => ({
  operationId,
  transaction: { type: "replace_suffix", expectedSuffix, replacement },
});

async function setup(options: Parameters<typeof dbs.open>[0] = {}) {
  const { fp, path } = dbs.open(options);
  const s = await fp.createSession({ userId: "u" });
  return { fp, path, s, memory: new ForkpointSession(s) };
}

describe("applyHistoryTransaction", () => {
  it("append_items: all items in one write, applied once however often the same operation is applied", async () => {
    const { path, s, memory } = await setup();
    await memory.addItems([user("hi")]);
    const items = [call("c1"), result("c1"), said("done")];
    await memory.applyHistoryTransaction(append("op-1", items));
    expect(await memory.getItems()).toEqual([user("hi"), ...items]);
    const dump = await dumpOf(path);
    await memory.applyHistoryTransaction(append("op-1", items));
    // The same transaction with its keys in another order is the same transaction.
    await memory.applyHistoryTransaction(
      append(
        "op-1",
        items.map((i) => Object.fromEntries(Object.entries(i).reverse()) as AgentInputItem),
      ),
    );
    expect(await dumpOf(path)).toEqual(dump);
    expect((await s.history()).map((m) => m.position)).toEqual([1, 2, 3, 4]);
  });

  it("holds across handles and processes: the same operation from another one changes nothing", async () => {
    const { path, s, memory } = await setup();
    const items = [user("question"), said("answer")];
    await memory.applyHistoryTransaction(append("shared-op", items));
    const other = new ForkpointSession(await dbs.track(openForkpoint({ path })).getSession(s.id, { userId: "u" }));
    await other.applyHistoryTransaction(append("shared-op", items));
    const worker = await sessionWorker(path, s.id, "u");
    try {
      expect(await worker.send({ op: "apply", args: append("shared-op", items) })).toEqual({ ok: true });
      expect(await worker.send({ op: "apply", args: append("shared-op", [user("else")]) })).toMatchObject({
        ok: false,
        code: "REQUEST_ID_REUSED",
      });
      // An operation the child applies first is applied once here too.
      expect(await worker.send({ op: "apply", args: append("child-op", [user("from the child")]) })).toEqual({ ok: true });
    } finally {
      expect(await worker.stop()).toBe(0);
    }
    await memory.applyHistoryTransaction(append("child-op", [user("from the child")]));
    expect(await memory.getItems()).toEqual([...items, user("from the child")]);
  });

  it("the same operation id with another transaction is REQUEST_ID_REUSED, history unchanged", async () => {
    const { path, memory } = await setup();
    await memory.applyHistoryTransaction(append("op", [user("a")]));
    await memory.applyHistoryTransaction(replace("rep", [user("a")], [user("b")]));
    const dump = await dumpOf(path);
    for (const args of [
      append("op", [user("other")]),
      append("op", [user("a"), user("a")]),
      replace("op", [], [user("a")]),
      replace("rep", [user("a")], [user("c")]),
      append("rep", [user("b")]),
    ]) {
      const error = await rejectionOf(memory.applyHistoryTransaction(args));
      expect(error).toBeInstanceOf(ConflictError);
      expect(error.code).toBe("REQUEST_ID_REUSED");
    }
    expect(await dumpOf(path)).toEqual(dump);
  });

  it("replace_suffix forks right after the item before the suffix; the old branch keeps it; a retry changes nothing", async () => {
    const { path, s, memory } = await setup();
    await memory.addItems([user("q"), call("c1"), result("c1")]);
    const before = await s.history();
    const first = (await s.info()).currentBranchId;
    await memory.applyHistoryTransaction(
      replace("r1", [call("c1"), result("c1")], [said("thinking"), call("c1"), result("c1"), said("done")]),
    );
    expect(await memory.getItems()).toEqual([user("q"), said("thinking"), call("c1"), result("c1"), said("done")]);
    const branch = (await s.branches()).find((b) => b.current)!;
    expect([branch.parentId, branch.forkPosition]).toEqual([first, 1]);
    expect(await s.history({ branchId: first })).toEqual(before);
    const dump = await dumpOf(path);
    // The suffix is gone now, yet the retry of the operation that replaced it succeeds as it did, changing nothing.
    await memory.applyHistoryTransaction(
      replace("r1", [call("c1"), result("c1")], [said("thinking"), call("c1"), result("c1"), said("done")]),
    );
    expect(await dumpOf(path)).toEqual(dump);
  });

  it("items the replacement starts with stay: the fork comes after them, or there is none when it starts with the whole suffix", async () => {
    const { s, memory } = await setup();
    await memory.addItems([user("q"), call("c1"), result("c1")]);
    const kept = await s.history();
    await memory.applyHistoryTransaction(replace("extend", [call("c1"), result("c1")], [call("c1"), result("c1"), said("done")]));
    expect(await s.branches()).toHaveLength(1);
    expect((await s.history()).slice(0, 3)).toEqual(kept);
    await memory.applyHistoryTransaction(replace("change-last", [result("c1"), said("done")], [result("c1"), said("better")]));
    const branches = await s.branches();
    expect(branches).toHaveLength(2);
    expect(branches.find((b) => b.current)!.forkPosition).toBe(kept[2]!.position);
    expect(await memory.getItems()).toEqual([user("q"), call("c1"), result("c1"), said("better")]);
    // A replacement shorter than the suffix takes items off, as popItem does.
    await memory.applyHistoryTransaction(replace("shorten", [result("c1"), said("better")], [result("c1")]));
    expect(await memory.getItems()).toEqual([user("q"), call("c1"), result("c1")]);
  });

  it("a suffix that does not match (other items, too long, reordered) is SUFFIX_MISMATCH: nothing changes, the id stays free", async () => {
    const { path, memory } = await setup();
    await memory.addItems([user("q"), said("a")]);
    const dump = await dumpOf(path);
    for (const expected of [[said("b")], [user("x"), user("q"), said("a")], [said("a"), user("q")], [user("q")]]) {
      const error = await rejectionOf(memory.applyHistoryTransaction(replace("m", expected, [said("c")])));
      expect(error).toBeInstanceOf(ConflictError);
      expect(error.code).toBe("SUFFIX_MISMATCH");
    }
    expect(await dumpOf(path)).toEqual(dump);
    // Not applied, so not recorded: the id applies another transaction later.
    await memory.applyHistoryTransaction(replace("m", [said("a")], [said("c")]));
    expect(await memory.getItems()).toEqual([user("q"), said("c")]);
  });

  it("bad input is a ValidationError before anything is written or recorded", async () => {
    const { path, memory } = await setup();
    await memory.addItems([user("q")]);
    const dump = await dumpOf(path);
    const bad: unknown[] = [
      null,
      { operationId: "", transaction: { type: "append_items", items: [] } },
      { operationId: "x".repeat(201), transaction: { type: "append_items", items: [] } },
      { operationId: " \t", transaction: { type: "append_items", items: [] } },
      { operationId: 5, transaction: { type: "append_items", items: [] } },
      { operationId: "v", transaction: { type: "drop_everything" } },
      { operationId: "v", transaction: { type: "append_items", items: "no" } },
      { operationId: "v", transaction: { type: "append_items", items: [user("ok"), { content: "no role" }] } },
      { operationId: "v", transaction: { type: "append_items", items: [user("ok"), { role: "user", content: () => 1 }] } },
      { operationId: "v", transaction: { type: "replace_suffix", expectedSuffix: [user("q")], replacement: [{ role: "" }] } },
    ];
    for (const args of bad) {
      const error = await rejectionOf(memory.applyHistoryTransaction(args as never));
      expect(error, JSON.stringify(args)).toBeInstanceOf(ValidationError);
    }
    expect(await dumpOf(path)).toEqual(dump);
    await memory.applyHistoryTransaction(append("v", [user("fine")]));
    expect(await memory.getItems()).toEqual([user("q"), user("fine")]);
  });

  it("a replaced suffix is a move: a tool call after the fork is undone, one before it stays applied", async () => {
    const world = new Set<string>();
    const mark = defineTool({
      name: "mark",
      run: async ({ key }: { key: string }) => void world.add(key),
      undo: async ({ args }) => void world.delete(args.key),
    });
    const { s, memory } = await setup({ tools: [mark] });
    await s.invoke(mark, { key: "before" });
    await memory.addItems([user("q")]);
    await s.invoke(mark, { key: "after" });
    await memory.addItems([said("a")]);
    await memory.applyHistoryTransaction(replace("undoing", [said("a")], [said("b")]));
    expect([...world]).toEqual(["before"]);
    expect((await s.toolTrack()).map((t) => t.args)).toEqual([{ key: "before" }]);
    expect(await memory.getItems()).toEqual([user("q"), said("b")]);
  });

  it("the Runner records a run stopped by an output guardrail through it: the tool call's items once, the call applied", async () => {
    const { path, s, memory } = await setup();
    const applied: SessionHistoryTransactionArgs[] = [];
    const own = memory.applyHistoryTransaction.bind(memory);
    memory.applyHistoryTransaction = async (args) => {
      applied.push(structuredClone(args));
      return own(args);
    };
    const note = tool({
      name: "note",
      description: "note",
      parameters: z.object({ x: z.string() }),
      execute: async ({ x }) => `noted ${x}`,
    });
    const guard: OutputGuardrail = {
      name: "no secrets",
      execute: async ({ agentOutput }) => ({ tripwireTriggered: String(agentOutput).includes("secret"), outputInfo: null }),
    };
    const model = new ScriptedModel([[functionCall("c1", "note", { x: "a" })], [reply("the secret is 42")]]);
    const agent = new Agent({ name: "w", model, tools: undoableAgentTools(s, [note], { note: () => {} }), outputGuardrails: [guard] });
    await expect(new Runner().run(agent, "go", { session: memory })).rejects.toThrow(/guardrail/i);
    expect(applied.map((a) => a.transaction.type)).toEqual(["append_items"]);
    const items = await memory.getItems();
    expect(items.map((i) => ("type" in i ? i.type : "message"))).toEqual(["message", "function_call", "function_call_result"]);
    expect(JSON.stringify(items)).not.toContain("secret");
    expect((await s.toolTrack()).map((t) => [t.callId, t.status, t.applied])).toEqual([["c1", "succeeded", true]]);
    // The Runner's retry of that operation (a resumed RunState, another server) writes nothing more.
    const dump = await dumpOf(path);
    await memory.applyHistoryTransaction(applied[0]!);
    expect(await dumpOf(path)).toEqual(dump);
  });
});
