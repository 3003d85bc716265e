// Two runs of one thread submitted at once, forking side by side: a run's step keeps the calls its nodes made.
import { AIMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { latch, say, sendTool, texts } from "./helpers.js";

const dbs = tempDatabases();
const thread = { configurable: { thread_id: "t" }, durability: "sync" as const };

/** A saver whose reads of a thread's head wait, once done, for the latch the config's `submit` names. */
class HeldSaver extends ForkpointSaver {
  holds = new Map<string, { read?: () => void; then: Promise<void> }>();
  override async getTuple(config: RunnableConfig) {
    const tuple = await super.getTuple(config);
    const hold = this.holds.get(String(config.configurable?.submit));
    if (hold) {
      hold.read?.();
      await hold.then;
    }
    return tuple;
  }
}

describe("a double submit of a thread whose nodes call tools", () => {
  it("keeps the calls of a run's step when its put forks after the other run's fork undid them", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new HeldSaver(fp, { userId: "alice" });
    const aInAct = latch();
    const bCalled = latch();
    let aRun: Promise<unknown> = Promise.resolve();
    const graph = new StateGraph(MessagesAnnotation)
      .addNode("think", (state) => ({ messages: [new AIMessage(`asks for ${String(state.messages.at(-1)!.content)}`)] }))
      .addNode("act", async (state) => {
        const t = String(state.messages.at(-2)!.content);
        if (t === "a") {
          // Run A's step waits until run B's step has made its call, and makes none.
          aInAct.open();
          await bCalled.wait();
          return { messages: [new AIMessage("skipped a")] };
        }
        const s = await saver.sessionFor("t", { userId: "alice" });
        await s.invoke("send", { t });
        if (t === "b") {
          // Run A's next put lands meanwhile: a fork at A's step, which undoes b.
          bCalled.open();
          await aRun;
        }
        return { messages: [new AIMessage(`sent ${t}`)] };
      })
      .addEdge(START, "think")
      .addEdge("think", "act")
      .addEdge("act", END)
      .compile({ checkpointer: saver });
    await graph.invoke(say("z"), thread);

    // Both runs read the thread's head before either goes on; B goes on once A's step waits in "act". So B's input
    // forks, B's step calls on B's branch, A's next put forks back at A's step (undoing b), and then B's put lands,
    // its parent on B's branch before b's call.
    const bRead = latch();
    saver.holds.set("a", { then: bRead.wait() });
    saver.holds.set("b", { read: bRead.open, then: aInAct.wait() });
    aRun = graph.invoke(say("a"), { ...thread, configurable: { ...thread.configurable, submit: "a" } });
    const bRun = graph.invoke(say("b"), { ...thread, configurable: { ...thread.configurable, submit: "b" } });
    const [a, b] = await Promise.all([aRun, bRun]);
    expect(texts((a as typeof MessagesAnnotation.State).messages).at(-1)).toBe("ai:skipped a");
    expect(texts((b as typeof MessagesAnnotation.State).messages).at(-1)).toBe("ai:sent b");

    // The session ends on B's branch: what it serves is what the world holds.
    const served = texts((await graph.getState(thread)).values.messages as never);
    expect(served.slice(-3)).toEqual(["human:b", "ai:asks for b", "ai:sent b"]);
    const s = await saver.sessionFor("t", { userId: "alice" });
    expect((await s.toolTrack()).map((c) => (c.args as { t: string }).t)).toEqual(["z", "b"]);
    expect(sent).toEqual(["z", "b"]);
    expect((await fp.verify()).ok).toBe(true);
    // And the thread goes on from there.
    expect(texts((await graph.invoke(say("c"), thread)).messages).slice(-4)).toEqual([
      "ai:sent b",
      "human:c",
      "ai:asks for c",
      "ai:sent c",
    ]);
    expect(sent).toEqual(["z", "b", "c"]);
  });
});
