// A switch back to a branch whose task asked twice shows the question it asked there, not its first or another's.
import { Command, END, START, StateGraph, interrupt } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { Log, sendTool } from "./helpers.js";

const dbs = tempDatabases();

describe("a task asking twice, answered once on a branch and on another since", () => {
  it.each([false, true])("shows that branch's next question after a switch back (the other finished: %s)", async (finished) => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const send = async (t: string) => (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t });
    // Node "both" asks "q1", then a question naming that answer, then sends both answers.
    const graph = new StateGraph(Log)
      .addNode("both", async () => {
        const a = interrupt("q1") as string;
        const b = interrupt(`q2 after ${a}`) as string;
        await send(`${a},${b}`);
        return { log: [`${a},${b}`] };
      })
      .addEdge(START, "both")
      .addEdge("both", END)
      .compile({ checkpointer: saver });
    const config = { configurable: { thread_id: "t" } };
    const asked = async () => (await graph.getState(config)).tasks.flatMap((t) => t.interrupts).map((i) => i.value);
    await graph.invoke({ log: ["start"] }, config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const x = (await s.info()).currentBranchId;
    const atQ1 = await s.checkpoint({ name: "at q1" });
    await graph.invoke(new Command({ resume: "a" }), config);
    expect(await asked()).toEqual(["q2 after a"]);
    await s.rollback(atQ1.id);
    expect(await asked()).toEqual(["q1"]);
    await graph.invoke(new Command({ resume: "x" }), config);
    expect(await asked()).toEqual(["q2 after x"]);
    if (finished) {
      expect((await graph.invoke(new Command({ resume: "y" }), config)).log).toEqual(["start", "x,y"]);
      expect(sent).toEqual(["x,y"]);
    }
    await s.switchBranch(x);
    // As the branch would stand had the other never been (as a MemorySaver shows it): "a" given, its next question open.
    expect(await asked()).toEqual(["q2 after a"]);
    // The history lists the head's checkpoint as the head shows it.
    const id = (await graph.getState(config)).config.configurable?.checkpoint_id as string;
    const listed: unknown[] = [];
    for await (const h of graph.getStateHistory(config))
      if (h.config.configurable?.checkpoint_id === id) listed.push(...h.tasks.flatMap((t) => t.interrupts).map((i) => i.value));
    expect(listed).toEqual(["q2 after a"]);
    expect(sent).toEqual([]);
    expect((await graph.invoke(new Command({ resume: "z" }), config)).log).toEqual(["start", "a,z"]);
    expect(sent).toEqual(["a,z"]);
    expect(await fp.verify()).toMatchObject({ ok: true });
  });
});
