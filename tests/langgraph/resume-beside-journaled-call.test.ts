// Two resumes of one waiting thread, the second sent while the first's node call runs (journaled before the second
// run reads the thread, its step not landed): the second run's put does not take the first's call for its own. The
// head never shows a state whose calls the world does not hold.
import { AIMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { Annotation, Command, END, MessagesAnnotation, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { latch, Log, outcome } from "./helpers.js";

const dbs = tempDatabases();

const Chat = Annotation.Root({ ...MessagesAnnotation.spec, log: Log.spec.log });
/** A saver telling when run B first read the thread. */
class WatchedSaver extends ForkpointSaver {
  onRead?: (config: RunnableConfig) => void;
  override async getTuple(config: RunnableConfig) {
    const tuple = await super.getTuple(config);
    this.onRead?.(config);
    return tuple;
  }
}

describe.each([
  ["with a messages channel", true],
  ["without a messages channel", false],
])("a resume sent while another resume's call runs (%s)", (_, chat) => {
  it.each([
    ["A's step lands first", "AB"],
    ["B's step is put first", "BA"],
  ])("never shows B's result beside A's call (%s)", async (_, order) => {
    const sent: string[] = [];
    const aRunning = latch();
    const bRead = latch();
    const aCalled = latch();
    const bCalled = latch();
    const send = defineTool<{ t: string }, null>({
      name: "send",
      run: async ({ t }) => {
        // A's call is journaled and running when B reads the thread.
        if (t === "A") {
          aRunning.open();
          await bRead.wait();
        }
        sent.push(t);
        return null;
      },
      undo: ({ args }) => {
        sent.splice(sent.indexOf(args.t), 1);
      },
    });
    const { fp } = dbs.open({ tools: [send] });
    const saver = new WatchedSaver(fp, { userId: "alice" });
    let aRun: Promise<unknown> = Promise.resolve();
    const graph = new StateGraph(chat ? Chat : Log)
      .addNode("ship", async () => {
        const answer = interrupt("ship?") as string;
        if (answer === "B") await aCalled.wait();
        try {
          await (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t: answer });
        } finally {
          // B's call (after A's) may be refused before its tool runs: the steps go on as they would.
          if (answer === "A") {
            aCalled.open();
            await bCalled.wait();
          } else {
            bCalled.open();
            if (order === "AB") await aRun.catch(() => undefined);
          }
        }
        return chat ? { log: [`ship ${answer}`], messages: [new AIMessage(`shipped ${answer}`)] } : { log: [`ship ${answer}`] };
      })
      .addEdge(START, "ship")
      .addEdge("ship", END)
      .compile({ checkpointer: saver });
    const config = (who: string) => ({ configurable: { thread_id: "t", who }, durability: "sync" as const });
    await graph.invoke(chat ? { log: ["start"], messages: [{ role: "user", content: "ship it" }] } : { log: ["start"] }, config("x"));
    saver.onRead = (c) => {
      if (c.configurable?.who === "B") bRead.open();
    };
    aRun = graph.invoke(new Command({ resume: "A" }), config("A"));
    await aRunning.wait();
    const bRun = graph.invoke(new Command({ resume: "B" }), config("B"));
    const settled = await Promise.allSettled([aRun, bRun]);

    // Whichever run lands, the head shows the results of exactly the calls the world holds.
    const head = ((await graph.getState(config("x"))).values.log as string[]).filter((l) => l.startsWith("ship ")).map((l) => l.slice(5));
    expect(head).toHaveLength(1);
    expect([...sent].sort()).toEqual(head);
    const s = await saver.sessionFor("t", { userId: "alice" });
    expect((await s.toolTrack()).filter((c) => c.applied).map((c) => (c.args as { t: string }).t)).toEqual(head);
    expect((await fp.verify()).ok).toBe(true);
    expect([...settled.map(outcome)].sort()).toEqual(["SESSION_MOVED", "ok"]);
  });
});
