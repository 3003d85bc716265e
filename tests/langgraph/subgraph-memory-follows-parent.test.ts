// A `checkpointer: true` subgraph's memory follows its parent's rollback and switch: no turn the parent left returns.
import { AIMessage } from "@langchain/core/messages";
import { Command, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { say, sendTool, texts } from "./helpers.js";

const dbs = tempDatabases();

/**
 * A parent whose one node is a subgraph with its own memory: "send X" sends X through the thread's session; "ask" asks
 * "ok?" and sends the answer.
 */
function setup(durability: "sync" | "async" | "exit") {
  const sent: string[] = [];
  const { fp } = dbs.open({ tools: [sendTool(sent)] });
  const saver = new ForkpointSaver(fp, { userId: "alice" });
  const sub = new StateGraph(MessagesAnnotation)
    .addNode("agent", async (st) => {
      const text = String(st.messages.at(-1)!.content);
      if (text === "ask") {
        const answer = interrupt("ok?") as string;
        await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: answer });
        return { messages: [new AIMessage(`answered ${answer} (${st.messages.length})`)] };
      }
      if (text.startsWith("send ")) await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: text.slice(5) });
      return { messages: [new AIMessage(`re: ${text} (${st.messages.length})`)] };
    })
    .addEdge(START, "agent")
    .addEdge("agent", END)
    .compile({ checkpointer: true });
  const graph = new StateGraph(MessagesAnnotation)
    .addNode("chat", sub)
    .addEdge(START, "chat")
    .addEdge("chat", END)
    .compile({ checkpointer: saver });
  const config = { configurable: { thread_id: "t" }, durability };
  const head = async () => texts((await graph.getState(config)).values.messages);
  return { sent, saver, graph, config, head };
}

describe.each(["sync", "async", "exit"] as const)("a checkpointer: true subgraph (durability %s)", (durability) => {
  it("forgets a turn a rollback undid, and a switch back brings none of the other branch's", async () => {
    const { sent, saver, graph, config, head } = setup(durability);
    await graph.invoke(say("hi"), config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const cp = await s.checkpoint({ name: "after hi" });
    await graph.invoke(say("send L1"), config);
    expect(sent).toEqual(["L1"]);
    await s.rollback(cp.id);
    expect(sent).toEqual([]);
    await graph.invoke(say("hello"), config);
    expect(await head()).toEqual(["human:hi", "ai:re: hi (1)", "human:hello", "ai:re: hello (3)"]);

    const original = (await s.branches()).find((b) => b.parentId === null)!;
    await s.switchBranch(original.id);
    expect(sent).toEqual(["L1"]);
    await graph.invoke(say("send L2"), config);
    expect(await head()).toEqual([
      "human:hi",
      "ai:re: hi (1)",
      "human:send L1",
      "ai:re: send L1 (3)",
      "human:send L2",
      "ai:re: send L2 (5)",
    ]);
    expect(sent).toEqual(["L1", "L2"]);
  });

  it("keeps its memory across the parent's turns with no move", async () => {
    const { graph, config, head } = setup(durability);
    await graph.invoke(say("a"), config);
    await graph.invoke(say("b"), config);
    await graph.invoke(say("c"), config);
    expect(await head()).toEqual(["human:a", "ai:re: a (1)", "human:b", "ai:re: b (3)", "human:c", "ai:re: c (5)"]);
  });

  it.skipIf(durability === "exit")("reruns a step a rollback to the parent's own checkpoint went back to", async () => {
    const { sent, saver, graph, config, head } = setup(durability);
    await graph.invoke(say("hi"), config);
    await graph.invoke(say("send L1"), config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const history: Awaited<ReturnType<typeof graph.getState>>[] = [];
    for await (const state of graph.getStateHistory(config)) history.push(state);
    const stepOf = (n: number) => history.find((h) => h.next.includes("chat") && h.values.messages.length === n)!;
    const lgId = (n: number) => stepOf(n).config.configurable!.checkpoint_id as string;
    const fpOf = async (id: string) =>
      (await s.listCheckpoints({})).items.find(
        (c) => (c.metadata as { langgraph?: { checkpointId?: string } } | null)?.langgraph?.checkpointId === id,
      )!;
    // Back where the subgraph's second turn began: it runs that turn again, with the first turn's memory only.
    await s.rollback((await fpOf(lgId(3))).id);
    expect(sent).toEqual([]);
    await graph.invoke(null, config);
    expect(await head()).toEqual(["human:hi", "ai:re: hi (1)", "human:send L1", "ai:re: send L1 (3)"]);
    expect(sent).toEqual(["L1"]);
    // Back where it first ran: it runs anew, remembering nothing.
    await s.rollback((await fpOf(lgId(1))).id);
    expect(sent).toEqual([]);
    await graph.invoke(null, config);
    await graph.invoke(say("again"), config);
    expect(await head()).toEqual(["human:hi", "ai:re: hi (1)", "human:again", "ai:re: again (3)"]);
  });

  it.each(["user", "LangGraph"] as const)(
    "waits again after a rollback to the %s checkpoint where it waited, and forgets the answer",
    async (which) => {
      const { sent, saver, graph, config, head } = setup(durability);
      await graph.invoke(say("hi"), config);
      await graph.invoke(say("ask"), config);
      const s = await saver.sessionFor("t", { userId: "alice" });
      const waitingId = (await graph.getState(config)).config.configurable!.checkpoint_id as string;
      const mine = await s.checkpoint({ name: "waiting" });
      await graph.invoke(new Command({ resume: "yes" }), config);
      expect(sent).toEqual(["yes"]);
      const waiting = (await s.listCheckpoints({})).items.find(
        (c) => (c.metadata as { langgraph?: { checkpointId?: string } } | null)?.langgraph?.checkpointId === waitingId,
      )!;
      await s.rollback(which === "user" ? mine.id : waiting.id);
      expect(sent).toEqual([]);
      const state = await graph.getState(config);
      expect(state.tasks.flatMap((t) => t.interrupts).map((i) => i.value)).toEqual(["ok?"]);
      await graph.invoke(new Command({ resume: "no" }), config);
      expect(sent).toEqual(["no"]);
      await graph.invoke(say("more"), config);
      expect(await head()).toEqual(["human:hi", "ai:re: hi (1)", "human:ask", "ai:answered no (3)", "human:more", "ai:re: more (5)"]);
    },
  );

  it.skipIf(durability === "exit")("remembers a time-traveled turn's past, not what came after it", async () => {
    const { graph, config, head } = setup(durability);
    await graph.invoke(say("a"), config);
    const first = (await graph.getState(config)).config;
    await graph.invoke(say("b"), config);
    await graph.invoke(say("c"), { ...first, durability });
    expect(await head()).toEqual(["human:a", "ai:re: a (1)", "human:c", "ai:re: c (3)"]);
  });
});
