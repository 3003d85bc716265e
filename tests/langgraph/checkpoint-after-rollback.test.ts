// A user's checkpoint taken right after a rollback stands for that point as the new branch has it: a rollback to it
// does not serve what the graph wrote at the same point on the branch the first rollback left.
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { Annotation, Command, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { Log, sendTool } from "./helpers.js";

const dbs = tempDatabases();

const config = { configurable: { thread_id: "t" } };

const Approval = Annotation.Root({ ...MessagesAnnotation.spec, answer: Annotation<string>() });

/** "ask" asks "approve?"; "act" sends the answer when it starts with "yes", else refuses (no message channel write). */
function approvalThenSend(saver: ForkpointSaver) {
  const sessionOf = () => saver.sessionFor("t", { userId: "alice" });
  return new StateGraph(Approval)
    .addNode("ask", () => ({ answer: interrupt("approve?") as string }))
    .addNode("act", async (state) => {
      if (!state.answer.startsWith("yes")) return { messages: [new AIMessage(`refused ${state.answer}`)] };
      await (await sessionOf()).invoke("send", { t: state.answer });
      return { messages: [new AIMessage(`sent ${state.answer}`)] };
    })
    .addEdge(START, "ask")
    .addEdge("ask", "act")
    .addEdge("act", END)
    .compile({ checkpointer: saver });
}

describe("a user's checkpoint taken right after a rollback", () => {
  it("at a wait: a rollback to it waits again, not on the answer the first branch gave", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const graph = approvalThenSend(saver);
    await graph.invoke({ messages: [new HumanMessage("go")] }, config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const waiting = await s.checkpoint({ name: "W" });
    await graph.invoke(new Command({ resume: "yes1" }), config);
    expect(sent).toEqual(["yes1"]);
    await s.rollback(waiting.id);
    expect(sent).toEqual([]);
    const waitingAgain = await s.checkpoint({ name: "W2" });
    await graph.invoke(new Command({ resume: "no" }), config);
    await s.rollback(waitingAgain.id);
    const state = await graph.getState(config);
    expect(state.next).toEqual(["ask"]);
    expect(state.values.answer).toBeUndefined();
    expect(state.tasks.flatMap((t) => t.interrupts).map((i) => i.value)).toEqual(["approve?"]);
    const out = await graph.invoke(new Command({ resume: "no again" }), config);
    expect(out.messages.map((m) => m.content)).toEqual(["go", "refused no again"]);
    expect(sent).toEqual([]);
    // Read as a point too: the user's checkpoint names the wait, not the first branch's answer.
    const at = await graph.getState(await saver.configFor({ checkpointId: waitingAgain.id }, { userId: "alice" }));
    expect(at.next).toEqual(["ask"]);
    expect(at.values.answer).toBeUndefined();
  });

  it("between runs of a graph without messages: a rollback to it leaves out the first branch's input", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const sessionOf = () => saver.sessionFor("t", { userId: "alice" });
    const graph = new StateGraph(Log)
      .addNode("n", async (state) => {
        const input = state.log.at(-1)!;
        await (await sessionOf()).invoke("send", { t: input });
        return { log: [`did ${input}`] };
      })
      .addEdge(START, "n")
      .addEdge("n", END)
      .compile({ checkpointer: saver });
    await graph.invoke({ log: ["r1"] }, config);
    const s = await sessionOf();
    const first = await s.checkpoint({ name: "C1" });
    await graph.invoke({ log: ["r2"] }, config);
    await s.rollback(first.id);
    expect((await graph.getState(config)).values.log).toEqual(["r1", "did r1"]);
    const second = await s.checkpoint({ name: "C2" });
    await graph.invoke({ log: ["r3"] }, config);
    await s.rollback(second.id);
    expect((await graph.getState(config)).values.log).toEqual(["r1", "did r1"]);
    expect(sent).toEqual(["r1"]);
    expect((await graph.invoke({ log: ["r4"] }, config)).log).toEqual(["r1", "did r1", "r4", "did r4"]);
    expect(sent).toEqual(["r1", "r4"]);
  });
});
