// The two-way bridge: a LangGraph thread's head is its forkpoint session's current position. A rollback, an edit, a
// `< 2/3 >` switch, an append or a state change made through forkpoint is what the next `graph.invoke` goes on from,
// and the session stays on the branch it was moved to.
import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { Command, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { JsonPlusSerializer, uuid5 } from "@langchain/langgraph-checkpoint";
import { fromMessage } from "../../src/langgraph/messages.js";
import { synthesizedId, synthesizedPosition } from "../../src/langgraph/thread-head.js";
import { canonicalJson } from "../../src/sessions/integrity/hashes.js";
import { describe, expect, it } from "vitest";
import { defineTool, type Forkpoint, type SessionHandle } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { makeTempDir, removeDir, tempDatabases } from "../helpers.js";
import { approvalGraph, echoGraph, texts, say } from "./helpers.js";

const dbs = tempDatabases();

const thread = (id: string) => ({ configurable: { thread_id: id } });

/** Two turns on thread "t" (hi, plan a trip), and the thread's session. */
async function twoTurns(fp: Forkpoint, userId = "alice") {
  const saver = new ForkpointSaver(fp, { userId });
  const graph = echoGraph(saver);
  await graph.invoke(say("hi"), thread("t"));
  await graph.invoke(say("plan a trip"), thread("t"));
  const s = await saver.sessionFor("t", { userId });
  return { saver, graph, s };
}

/** The forkpoint checkpoint holding the LangGraph checkpoint of this step. */
async function stepCheckpoint(fp: Forkpoint, s: SessionHandle, step: number) {
  const { items } = await fp.listCheckpoints({ userId: s.userId, sessionId: s.id, limit: 100 });
  return items.find((c) => (c.metadata as { langgraph?: { step?: number } } | null)?.langgraph?.step === step)!;
}

const contents = async (s: SessionHandle) => (await s.history()).map((m) => m.content);

describe("a LangGraph thread goes on from its forkpoint session's current position", () => {
  it("a forkpoint rollback to a LangGraph checkpoint: the graph continues from there, on the rollback's branch", async () => {
    const { fp } = dbs.open();
    const { graph, s } = await twoTurns(fp);
    const endOfFirst = await stepCheckpoint(fp, s, 1);
    const { branch } = await s.rollback(endOfFirst.id);
    expect(texts((await graph.getState(thread("t"))).values.messages)).toEqual(["human:hi", "ai:echo: hi"]);

    const out = await graph.invoke(say("plan a party"), thread("t"));
    expect(texts(out.messages)).toEqual(["human:hi", "ai:echo: hi", "human:plan a party", "ai:echo: plan a party"]);
    expect((await s.info()).currentBranchId).toBe(branch.id);
    expect(await contents(s)).toEqual(["hi", "echo: hi", "plan a party", "echo: plan a party"]);
    // No fork back: the first branch and the rollback's, nothing else.
    expect(await s.branches()).toHaveLength(2);
    expect(await fp.verify()).toMatchObject({ ok: true });
  });

  it("a rollback to the thread's very first LangGraph checkpoint replays its input there, as LangGraph's time travel does", async () => {
    const { fp } = dbs.open();
    const { graph, s } = await twoTurns(fp);
    const { branch } = await s.rollback((await stepCheckpoint(fp, s, -1)).id);
    const out = await graph.invoke(null, thread("t"));
    expect(texts(out.messages)).toEqual(["human:hi", "ai:echo: hi"]);
    expect((await s.info()).currentBranchId).toBe(branch.id);
    expect(await s.branches()).toHaveLength(2);
  });

  it("a rollback to a user's own checkpoint: the graph continues from its position", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = echoGraph(saver);
    await graph.invoke(say("hi"), thread("t"));
    const s = await saver.sessionFor("t", { userId: "alice" });
    const mine = await s.checkpoint({ name: "after hi" });
    await graph.invoke(say("plan a trip"), thread("t"));

    const { branch } = await s.rollback(mine.id);
    expect(texts((await graph.getState(thread("t"))).values.messages)).toEqual(["human:hi", "ai:echo: hi"]);
    const out = await graph.invoke(say("plan a party"), thread("t"));
    expect(texts(out.messages)).toEqual(["human:hi", "ai:echo: hi", "human:plan a party", "ai:echo: plan a party"]);
    expect((await s.info()).currentBranchId).toBe(branch.id);
    expect(await s.branches()).toHaveLength(2);
  });

  it("an edit of a user message: the graph reads the edited message and goes on after it, on the edit's branch", async () => {
    const { fp } = dbs.open();
    const { graph, s } = await twoTurns(fp);
    const question = (await s.history())[2]!;
    const { branch } = await s.edit(question.id, { role: "user", content: "plan a party" });

    const now = await graph.getState(thread("t"));
    expect(texts(now.values.messages)).toEqual(["human:hi", "ai:echo: hi", "human:plan a party"]);
    expect(now.values.messages[2]).toBeInstanceOf(HumanMessage);
    // Nothing is pending at the edited point: invoking without input changes nothing, and does not move the session.
    expect(texts((await graph.invoke(null, thread("t"))).messages)).toEqual(["human:hi", "ai:echo: hi", "human:plan a party"]);
    const out = await graph.invoke(say("with a cake"), thread("t"));
    expect(texts(out.messages)).toEqual(["human:hi", "ai:echo: hi", "human:plan a party", "human:with a cake", "ai:echo: with a cake"]);
    expect((await s.info()).currentBranchId).toBe(branch.id);
    expect(await contents(s)).toEqual(["hi", "echo: hi", "plan a party", "with a cake", "echo: with a cake"]);
    expect((await s.versions(question.id)).count).toBe(2);
    expect(await s.branches()).toHaveLength(2);
  });

  it("a switch back to the first version (< 1/2 >): the graph goes on from that branch's head, on that branch", async () => {
    const { fp } = dbs.open();
    const { graph, s } = await twoTurns(fp);
    const first = (await s.info()).currentBranchId;
    const question = (await s.history())[2]!;
    await s.edit(question.id, { role: "user", content: "plan a party" });
    await graph.invoke(say("with a cake"), thread("t"));

    await s.switchBranch(first);
    expect(texts((await graph.getState(thread("t"))).values.messages)).toEqual([
      "human:hi",
      "ai:echo: hi",
      "human:plan a trip",
      "ai:echo: plan a trip",
    ]);
    const out = await graph.invoke(say("to Rome"), thread("t"));
    expect(texts(out.messages).slice(-2)).toEqual(["human:to Rome", "ai:echo: to Rome"]);
    expect((await s.info()).currentBranchId).toBe(first);
    expect(await contents(s)).toEqual(["hi", "echo: hi", "plan a trip", "echo: plan a trip", "to Rome", "echo: to Rome"]);
    expect(await s.branches()).toHaveLength(2);
  });

  it("messages appended through forkpoint are LangChain messages of the graph's channel, and the graph goes on after them", async () => {
    const { fp } = dbs.open();
    const { graph, s } = await twoTurns(fp);
    await s.append([
      { role: "system", content: "be brief" },
      { role: "assistant", content: "anything else?" },
      { role: "tool", content: "42", metadata: { tool_call_id: "call_1" } },
      { role: "user", content: "from the app", clientId: "ui-7" },
    ]);
    const messages = (await graph.getState(thread("t"))).values.messages as BaseMessage[];
    const [system, assistant, tool, user] = messages.slice(4);
    expect(system).toBeInstanceOf(SystemMessage);
    expect(assistant).toBeInstanceOf(AIMessage);
    expect(tool).toBeInstanceOf(ToolMessage);
    expect((tool as ToolMessage).tool_call_id).toBe("call_1");
    expect(user).toBeInstanceOf(HumanMessage);
    expect(user!.content).toBe("from the app");
    expect(user!.id).toBe("ui-7");

    // Invoked without input: nothing is pending, the state is the session's, and the session stays where it is.
    const branch = (await s.info()).currentBranchId;
    const same = await graph.invoke(null, thread("t"));
    expect(texts(same.messages).at(-1)).toBe("human:from the app");
    const out = await graph.invoke(say("next"), thread("t"));
    expect(texts(out.messages).slice(-3)).toEqual(["human:from the app", "human:next", "ai:echo: next"]);
    expect((await s.info()).currentBranchId).toBe(branch);
    expect(await s.branches()).toHaveLength(1);
    expect((await contents(s)).slice(-4)).toEqual(["42", "from the app", "next", "echo: next"]);
    // Read back by a fresh saver (the messages are not stored again): the same list.
    const fresh = echoGraph(new ForkpointSaver(fp, { userId: "alice" }));
    expect(texts((await fresh.getState(thread("t"))).values.messages)).toEqual(texts(out.messages));
    expect(await fp.verify()).toMatchObject({ ok: true });
  });

  it("a rollback made through another handle on the database (another process) is where the graph goes on", async () => {
    const path = dbs.path();
    const { fp } = dbs.open({ path });
    const { graph, s } = await twoTurns(fp);
    const other = dbs.open({ path }).fp;
    const theirs = await new ForkpointSaver(other, { userId: "alice" }).sessionFor("t", { userId: "alice" });
    const { branch } = await theirs.rollback((await stepCheckpoint(other, theirs, 1)).id);
    const out = await graph.invoke(say("plan a party"), thread("t"));
    expect(texts(out.messages)).toEqual(["human:hi", "ai:echo: hi", "human:plan a party", "ai:echo: plan a party"]);
    expect((await s.info()).currentBranchId).toBe(branch.id);
    expect(await s.branches()).toHaveLength(2);
  });

  it("LangGraph's updateState on the head after a forkpoint append goes on from it, on the same branch", async () => {
    const { fp } = dbs.open();
    const { graph, s } = await twoTurns(fp);
    await s.append({ role: "user", content: "typed in the app" });
    await graph.updateState(thread("t"), { messages: [new AIMessage("noted")] });
    expect(texts((await graph.getState(thread("t"))).values.messages).slice(-2)).toEqual(["human:typed in the app", "ai:noted"]);
    expect((await contents(s)).slice(-2)).toEqual(["typed in the app", "noted"]);
    expect(await s.branches()).toHaveLength(1);
  });

  it("a state change is forkpoint's own (not a channel): the graph goes on, and the session keeps it, on its branch", async () => {
    const { fp } = dbs.open();
    const { graph, s } = await twoTurns(fp);
    await s.setState({ budget: 500 });
    const out = await graph.invoke(say("cheaper"), thread("t"));
    expect(texts(out.messages).slice(-2)).toEqual(["human:cheaper", "ai:echo: cheaper"]);
    expect(out).not.toHaveProperty("budget");
    expect(await s.getState()).toEqual({ budget: 500 });
    expect(await s.branches()).toHaveLength(1);
  });

  it("the head's synthesized checkpoint has one id, which names it for any saver, also after a reopen", async () => {
    const path = dbs.path();
    const first = dbs.open({ path }).fp;
    const { saver, s } = await twoTurns(first);
    await s.append({ role: "user", content: "typed elsewhere" });
    const a = await saver.getTuple(thread("t"));
    const b = await new ForkpointSaver(first, { userId: "alice" }).getTuple(thread("t"));
    const id = a!.config.configurable!.checkpoint_id as string;
    expect(b!.config.configurable!.checkpoint_id).toBe(id);
    expect(a!.metadata).toMatchObject({ source: "update" });
    // Its parent is the LangGraph checkpoint it descends from: the end of the second turn.
    const endOfSecond = (await stepCheckpoint(first, s, 4)).metadata as { langgraph: { checkpointId: string } };
    expect(a!.parentConfig!.configurable!.checkpoint_id).toBe(endOfSecond.langgraph.checkpointId);
    await first.close();

    const { fp } = dbs.open({ path });
    const saver2 = new ForkpointSaver(fp, { userId: "alice" });
    const named = await saver2.getTuple({ configurable: { thread_id: "t", checkpoint_id: id } });
    expect(texts(named!.checkpoint.channel_values.messages as BaseMessage[]).at(-1)).toBe("human:typed elsewhere");
    // A graph given that config goes on from it, at the session's head: no fork.
    const out = await echoGraph(saver2).invoke(null, { configurable: { thread_id: "t", checkpoint_id: id } });
    expect(texts(out.messages).at(-1)).toBe("human:typed elsewhere");
    const s2 = await saver2.sessionFor("t", { userId: "alice" });
    expect(await s2.branches()).toHaveLength(1);
  });

  it("an interrupted graph still resumes after a message appended through forkpoint (its writes kept under the head's id)", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const graph = approvalGraph(saver);
    await graph.invoke(say("go"), thread("i"));
    const s = await saver.sessionFor("i");
    await s.append({ role: "user", content: "note: urgent" });
    const waiting = await graph.getState(thread("i"));
    expect(waiting.next).toEqual(["ask"]);
    expect(texts(waiting.values.messages)).toEqual(["human:go", "human:note: urgent"]);
    // The node runs again from the head and interrupts there; its interrupt is stored under the head's id.
    await graph.invoke(null, thread("i"));
    expect((await graph.getState(thread("i"))).tasks[0]?.interrupts[0]?.value).toBe("approve?");
    const done = await graph.invoke(new Command({ resume: "yes" }), thread("i"));
    expect(texts(done.messages)).toEqual(["human:go", "human:note: urgent", "ai:approved: yes"]);
    expect(await s.branches()).toHaveLength(1);
  });
  it("a rollback to a checkpoint taken while the graph waited at an interrupt: it waits there again, its answer undone", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const graph = approvalGraph(saver);
    await graph.invoke(say("go"), thread("i"));
    const s = await saver.sessionFor("i");
    const waiting = await s.checkpoint({ name: "waiting for approval" });
    await graph.invoke(new Command({ resume: "yes" }), thread("i"));
    const { branch } = await s.rollback(waiting.id);

    const state = await graph.getState(thread("i"));
    expect(texts(state.values.messages)).toEqual(["human:go"]);
    expect(state.next).toEqual(["ask"]);
    expect(state.tasks[0]?.interrupts[0]?.value).toBe("approve?");
    const out = await graph.invoke(new Command({ resume: "no" }), thread("i"));
    expect(texts(out.messages)).toEqual(["human:go", "ai:approved: no"]);
    expect(await contents(s)).toEqual(["go", "approved: no"]);
    expect((await s.info()).currentBranchId).toBe(branch.id);
    expect(await s.branches()).toHaveLength(2);
  });

  it("the same for a rollback to the LangGraph checkpoint the interrupt was pending at, from its own config too", async () => {
    const { fp } = dbs.open();
    const saver = new ForkpointSaver(fp);
    const graph = approvalGraph(saver);
    await graph.invoke(say("go"), thread("i"));
    const atInterrupt = (await graph.getState(thread("i"))).config;
    await graph.invoke(new Command({ resume: "yes" }), thread("i"));
    const s = await saver.sessionFor("i");
    await s.rollback((await stepCheckpoint(fp, s, 0)).id);

    expect(texts((await graph.getState(thread("i"))).values.messages)).toEqual(["human:go"]);
    // Named by its id, the thread's head reads as the head does: without the results of the run the rollback left.
    expect((await graph.getState(atInterrupt)).tasks[0]?.result).toBeUndefined();
    const out = await graph.invoke(new Command({ resume: "later" }), atInterrupt);
    expect(texts(out.messages)).toEqual(["human:go", "ai:approved: later"]);
    expect(await contents(s)).toEqual(["go", "approved: later"]);
    expect(await s.branches()).toHaveLength(2);
  });
});

describe("a tool-calling graph whose tools journal their calls on the thread's session", () => {
  it("keeps each step on its branch (no fork undoing the call), and a rollback undoes exactly the calls after it", async () => {
    const dir = makeTempDir();
    try {
      const writeFile = defineTool({
        name: "write_file",
        run: async ({ name, text }: { name: string; text: string }) => (writeFileSync(join(dir, name), text), "ok"),
        undo: async ({ args }: { args: { name: string; text: string } }) => rmSync(join(dir, args.name)),
      });
      const { fp } = dbs.open({ tools: [writeFile] });
      const saver = new ForkpointSaver(fp);
      const lcTool = tool(
        async (args, config) => String(await (await saver.sessionFor(config.configurable.thread_id)).invoke("write_file", args)),
        { name: "write_file", description: "writes a file", schema: z.object({ name: z.string(), text: z.string() }) },
      );
      // A scripted model: a tool call, then its answer, per turn.
      const replies = [
        new AIMessage({ content: "", tool_calls: [{ id: "c1", name: "write_file", args: { name: "a.txt", text: "A" } }] }),
        new AIMessage("wrote a"),
        new AIMessage({ content: "", tool_calls: [{ id: "c2", name: "write_file", args: { name: "b.txt", text: "B" } }] }),
        new AIMessage("wrote b"),
        new AIMessage("nothing to write"),
      ];
      const graph = new StateGraph(MessagesAnnotation)
        .addNode("agent", () => ({ messages: [replies.shift()!] }))
        .addNode("tools", new ToolNode([lcTool]))
        .addEdge(START, "agent")
        .addConditionalEdges("agent", toolsCondition)
        .addEdge("tools", "agent")
        .compile({ checkpointer: saver });
      await graph.invoke(say("write a"), thread("r"));
      const s = await saver.sessionFor("r");
      const afterA = await s.checkpoint({ name: "after a" });
      await graph.invoke(say("write b"), thread("r"));
      expect(readdirSync(dir).sort()).toEqual(["a.txt", "b.txt"]);
      expect((await s.toolTrack()).map((t) => t.args)).toEqual([
        { name: "a.txt", text: "A" },
        { name: "b.txt", text: "B" },
      ]);
      expect(await s.branches()).toHaveLength(1);

      const { undone } = await s.rollback(afterA.id);
      expect(undone).toHaveLength(1);
      expect(readdirSync(dir)).toEqual(["a.txt"]);
      const out = await graph.invoke(say("nothing"), thread("r"));
      expect(texts(out.messages)).toEqual(["human:write a", "ai:", "tool:ok", "ai:wrote a", "human:nothing", "ai:nothing to write"]);
      expect(await s.branches()).toHaveLength(2);
      expect(await s.toolTrack()).toHaveLength(1);
      expect(readdirSync(dir)).toEqual(["a.txt"]);
    } finally {
      removeDir(dir);
    }
  });
});

describe("a synthesized checkpoint's id", () => {
  it("is a version-8 UUID LangGraph can derive task ids from, naming its position, one per point and base", () => {
    const point = { branchId: "br_1", position: 1234, hash: "ab".repeat(32) };
    const id = synthesizedId("ses_1", point, "1f0-base");
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(uuid5("task", id)).toMatch(/^[0-9a-f-]{36}$/);
    expect(synthesizedPosition(id)).toBe(1234);
    expect(synthesizedId("ses_1", point, "1f0-base")).toBe(id);
    expect(synthesizedId("ses_1", point, "1f0-other")).not.toBe(id);
    expect(synthesizedId("ses_2", point, "1f0-base")).not.toBe(id);
    // LangGraph's own ids (version 6) are never read as synthesized ones.
    expect(synthesizedPosition("1f0c8a2e-3b4d-6e5f-8000-0123456789ab")).toBeUndefined();
  });
});

describe("forkpoint messages in the graph", () => {
  it("are LangChain's own serialization of their class: the graph's next put gives back the very same item", async () => {
    const serde = new JsonPlusSerializer();
    const cases: Parameters<typeof fromMessage>[0][] = [
      { id: "msg_1", role: "user", content: "hi", metadata: {} },
      { id: "msg_2", role: "assistant", content: [{ type: "text", text: "parts" }], clientId: "c2", metadata: {} },
      { id: "msg_3", role: "system", content: "be brief", metadata: {} },
      { id: "msg_4", role: "tool", content: "42", metadata: { tool_call_id: "call_1" } },
    ];
    for (const m of cases) {
      const item = fromMessage(m);
      const revived = await serde.loadsTyped("json", JSON.stringify(item));
      const [, again] = await serde.dumpsTyped(revived);
      expect(canonicalJson(JSON.parse(new TextDecoder().decode(again)))).toBe(canonicalJson(item));
    }
    // Other roles, and content LangChain does not take, stay plain; so do the graph's own plain items.
    expect(fromMessage({ role: "planner", content: "x", metadata: {} })).toEqual({ role: "planner", content: "x" });
    expect(fromMessage({ role: "user", content: { a: 1 }, metadata: {} })).toEqual({ role: "user", content: { a: 1 } });
    expect(fromMessage({ role: "user", content: "x", metadata: { langgraph: "plain" } })).toEqual({ role: "user", content: "x" });
  });
});
