// Two savers on one Forkpoint (two graphs, two modules) running one thread at once: they tell the runs apart as one
// saver does. Two resumes of a waiting thread, each through its own saver: the run whose node calls first keeps its
// call; the other is stopped (`SESSION_MOVED`), its call refused before its tool runs.
import { AIMessage } from "@langchain/core/messages";
import { Annotation, Command, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { latch, Log, outcome, sendTool } from "./helpers.js";

const dbs = tempDatabases();
const thread = { configurable: { thread_id: "t" }, durability: "sync" as const };

const Chat = Annotation.Root({ ...MessagesAnnotation.spec, log: Log.spec.log });
describe.each([
  ["with a messages channel", true],
  ["without a messages channel", false],
])("two resumes of a waiting thread through two savers on one Forkpoint (%s)", (_, chat) => {
  it("keeps the calls of the run calling first and stops the other, its call refused", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const savers = { A: new ForkpointSaver(fp, { userId: "alice" }), B: new ForkpointSaver(fp, { userId: "alice" }) };
    const aCalled = latch();
    const bCalled = latch();
    let aRun: Promise<unknown> = Promise.resolve();
    const build = () =>
      new StateGraph(chat ? Chat : Log)
        .addNode("ship", async () => {
          const answer = interrupt("ship?") as "A" | "B";
          // B's node calls once A's has called; A's step lands once B's call is made; B's put once A's run ended.
          // B's call is refused before its tool runs (its put would fork before A's call, undoing its own).
          if (answer === "B") await aCalled.wait();
          try {
            await (await savers[answer].sessionFor("t", { userId: "alice" })).invoke("send", { t: answer });
          } finally {
            if (answer === "A") {
              aCalled.open();
              await bCalled.wait();
            } else {
              bCalled.open();
              await aRun.catch(() => undefined);
            }
          }
          return chat ? { log: [`ship ${answer}`], messages: [new AIMessage(`shipped ${answer}`)] } : { log: [`ship ${answer}`] };
        })
        .addEdge(START, "ship")
        .addEdge("ship", END);
    const graphA = build().compile({ checkpointer: savers.A });
    const graphB = build().compile({ checkpointer: savers.B });
    await graphA.invoke(chat ? { log: ["start"], messages: [{ role: "user", content: "ship it" }] } : { log: ["start"] }, thread);
    aRun = graphA.invoke(new Command({ resume: "A" }), thread);
    const settled = await Promise.allSettled([aRun, graphB.invoke(new Command({ resume: "B" }), thread)]);

    const state = await graphA.getState(thread);
    expect({ head: state.values.log, world: sent }).toEqual({ head: ["start", "ship A"], world: ["A"] });
    const s = await savers.A.sessionFor("t", { userId: "alice" });
    expect((await s.toolTrack()).filter((c) => c.applied).map((c) => (c.args as { t: string }).t)).toEqual(["A"]);
    expect((await fp.verify()).ok).toBe(true);
    expect(settled.map(outcome)).toEqual(["ok", "SESSION_MOVED"]);
  });
});
