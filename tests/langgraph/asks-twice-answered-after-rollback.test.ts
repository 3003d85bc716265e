// A task asking twice, its first question answered after a rollback to a user's checkpoint at the wait, asks its next.
import { Command } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { asksTwiceBesideOne, sendTool } from "./helpers.js";

const dbs = tempDatabases();

describe("a rollback to a user's checkpoint at a wait the step was resumed past", () => {
  it("asks the next question of a task answered there since, keeping its answer", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const send = async (t: string) => (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t });
    const { graph, config, waits } = asksTwiceBesideOne(saver, send);
    await graph.invoke({ log: ["start"] }, config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const waiting = await s.checkpoint({ name: "waiting" });
    await graph.invoke(new Command({ resume: { [(await waits()).q1!]: "a" } }), config);
    await graph.invoke(new Command({ resume: { [(await waits()).qb!]: "b" } }), config);
    await s.rollback(waiting.id);
    expect(Object.keys(await waits()).sort()).toEqual(["q1", "qb"]);
    await graph.invoke(new Command({ resume: { [(await waits()).q1!]: "x" } }), config);
    const w = await waits();
    expect(Object.keys(w).sort()).toEqual(["q2", "qb"]);
    const out = await graph.invoke(new Command({ resume: { [w.q2!]: "y", [w.qb!]: "c" } }), config);
    expect([...out.log].sort()).toEqual(["A:x,y", "qb=c", "start"]);
    expect([...sent].sort()).toEqual(["A:x,y", "qb=c"]);
  });
});
