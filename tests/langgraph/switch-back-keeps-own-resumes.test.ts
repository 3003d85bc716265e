// A switch back to a branch serves the resume values given on it, not those a run on another branch wrote over them.
import { Command } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ForkpointSaver } from "../../src/langgraph/index.js";
import { tempDatabases } from "../helpers.js";
import { asksTwiceBesideOne, sendTool } from "./helpers.js";

const dbs = tempDatabases();

describe("a task resumed on two branches at the same checkpoint", () => {
  it("is served each branch's own answers after a switch back", async () => {
    const sent: string[] = [];
    const { fp } = dbs.open({ tools: [sendTool(sent)] });
    const saver = new ForkpointSaver(fp, { userId: "alice" });
    const send = async (t: string) => (await saver.sessionFor("t", { userId: "alice" })).invoke("send", { t });
    const { graph, config, waits, resume } = asksTwiceBesideOne(saver, send);
    await graph.invoke({ log: ["start"] }, config);
    const s = await saver.sessionFor("t", { userId: "alice" });
    const waiting = await s.checkpoint({ name: "waiting" });
    const b1 = (await s.info()).currentBranchId;
    await resume("q1", "a");
    await resume("qb", "b");
    await s.rollback(waiting.id);
    await resume("q1", "x");
    await s.switchBranch(b1);
    const out = await resume("q2", "y");
    expect([...out.log].sort()).toEqual(["A:a,y", "qb=b", "start"]);
    expect([...sent].sort()).toEqual(["A:a,y", "qb=b"]);
  });
});
