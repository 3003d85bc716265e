// summary: a session at a glance, kept in step with what history, branches, listings and the tool track say.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { makeTempDir, rejectionOf, tempDatabases, writeFileTool } from "../helpers.js";

const dbs = tempDatabases();
const dir = makeTempDir();
const writeFile = writeFileTool(dir);
const failing = defineTool<Record<string, never>, null>({
  name: "fails",
  run: async () => {
    throw new Error("no");
  },
});

describe("summary", () => {
  it("of a new session: its info, one branch, nothing else", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice", title: "empty" });
    const sum = await s.summary();
    expect(sum).toEqual({
      ...(await s.info()),
      branches: 1,
      messages: 0,
      position: 0,
      lastMessage: null,
      checkpoints: 0,
      latestCheckpoint: null,
      checkpointsByName: {},
      firstCheckpointAt: null,
      lastCheckpointAt: null,
      checkpointSpanMs: null,
      toolCalls: { total: 0, running: 0, succeeded: 0, failed: 0, applied: 0 },
    });
  });

  it("agrees with history, branches, listings and the tool track as the session moves", async () => {
    const { fp } = dbs.open({ tools: [writeFile, failing] });
    const s = await fp.createSession({ userId: "alice", title: "trip" });
    await s.append([
      { role: "user", content: "plan a trip" },
      { role: "assistant", content: "where to?" },
    ]);
    const cp = await s.checkpoint({ name: "asked" });
    await s.invoke("write_file", { name: "a.txt", text: "A" });
    await rejectionOf(s.invoke("fails", {}));
    await s.append({ role: "user", content: "Lisbon" });
    await s.setState({ city: "Lisbon" }); // the head is now a state change, after the last message
    await s.checkpoint({ name: "expired", expiresIn: 1 });
    const latest = await s.checkpoint({ name: "latest" });
    await new Promise((r) => setTimeout(r, 5));

    let sum = await s.summary();
    const history = await s.history();
    expect(sum).toMatchObject({ currentBranchId: (await s.info()).currentBranchId, position: 6, messages: 3 });
    expect(sum.lastMessage).toEqual(history.at(-1));
    expect(sum.checkpoints).toBe(2); // the expired one is not counted, as listings do not show it
    expect(sum.latestCheckpoint).toEqual(latest);
    expect(sum.toolCalls).toEqual({ total: 2, running: 0, succeeded: 1, failed: 1, applied: 1 });

    // A rollback forks a branch with no entries of its own: the last message comes from the parent's segment.
    await s.rollback(cp.id);
    sum = await s.summary();
    expect(sum.branches).toBe((await s.branches()).length);
    expect(sum.branches).toBe(2);
    expect(sum).toMatchObject({ currentBranchId: (await s.info()).currentBranchId, position: 2, messages: 2 });
    expect(sum.lastMessage).toEqual((await s.history()).at(-1));
    expect(sum.lastMessage?.content).toBe("where to?");
    expect(sum.toolCalls).toEqual({ total: 0, running: 0, succeeded: 0, failed: 0, applied: 0 });
    expect(sum.checkpoints).toBe((await fp.listCheckpoints({ userId: "alice", sessionId: s.id })).items.length);
    expect(fs.existsSync(path.join(dir, "a.txt"))).toBe(false);
  });

  it("counts as applied a call that landed off the current lineage (invoke after a question): the world, not the lineage", async () => {
    const { fp } = dbs.open({ tools: [writeFile] });
    const s = await fp.createSession({ userId: "alice" });
    const [question] = await s.append({ role: "user", content: "write b" });
    const cp = await s.checkpoint({ name: "asked" });
    await s.append({ role: "user", content: "another tab's message" });
    await s.invoke("write_file", { name: "b.txt", text: "B" }, { after: question!.id });
    // Off the current lineage: its track holds no call, yet the effect is in the world, and a rollback would undo it.
    expect(await s.toolTrack()).toEqual([]);
    expect((await s.plan({ checkpointId: cp.id })).undone.map((t) => t.tool)).toEqual(["write_file"]);
    expect((await s.summary()).toolCalls).toEqual({ total: 0, running: 0, succeeded: 0, failed: 0, applied: 1 });
    await s.rollback(cp.id);
    expect(fs.existsSync(path.join(dir, "b.txt"))).toBe(false);
    expect((await s.summary()).toolCalls.applied).toBe(0);
  });
});
