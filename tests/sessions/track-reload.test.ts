// Tracked objects are loaded back by every rollback, one that finds the session already there included: unsaved
// changes to the object go, as they go with any other move.
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { makeTempDir, rejectionOf, removeDir, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

describe("track: reloads where nothing moves", () => {
  it("a rollback to the checkpoint at the head loads the saved fields over unsaved changes", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const agent = { memory: ["a"] };
    const t = s.track(agent, { fields: ["memory"] });
    await t.save();
    const cp = await s.checkpoint({ name: "saved" });
    agent.memory.push("unsaved");
    await s.rollback(cp.id);
    expect(agent.memory).toEqual(["a"]);
    // A second click does the same.
    agent.memory.push("again");
    await s.rollback(cp.id);
    expect(agent.memory).toEqual(["a"]);
    expect(await s.getState()).toEqual({ memory: ["a"] });
  });

  it("a failed atomic block that saved nothing leaves the object as the state it restores", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const agent = { memory: ["a"] };
    const t = s.track(agent, { fields: ["memory"] });
    await t.save();
    const error = await rejectionOf(
      s.atomic(async () => {
        agent.memory.push("in block");
        throw new Error("undo it");
      }),
    );
    expect((error as Error).message).toBe("undo it");
    expect(agent.memory).toEqual(["a"]);
  });

  it("a rollback to a checkpoint from before the first save resets the fields to their values at track time", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const agent = { n: 0 };
    const cp = await s.checkpoint({ name: "start" });
    s.track(agent, { fields: ["n"] });
    agent.n = 5;
    await s.rollback(cp.id);
    expect(agent.n).toBe(0);
  });

  it("a switch to the current branch loads the saved fields too", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const agent = { n: 1 };
    const t = s.track(agent, { fields: ["n"] });
    await t.save();
    agent.n = 2;
    await s.switchBranch((await s.info()).currentBranchId);
    expect(agent.n).toBe(1);
  });

  it("a files-only rollback leaves the state, and the object, as they are", async () => {
    const { fp } = dbs.open();
    const dir = makeTempDir("forkpoint-track-files-");
    try {
      fs.writeFileSync(path.join(dir, "notes"), "one");
      const s = await fp.createSession({ userId: "u" });
      await s.attachWorkspace(dir);
      const agent = { n: 1 };
      const t = s.track(agent, { fields: ["n"] });
      await t.save();
      const cp = await s.checkpoint({ name: "files" });
      fs.writeFileSync(path.join(dir, "notes"), "two");
      agent.n = 2;
      await s.rollback(cp.id, { scope: "files", force: true });
      expect(fs.readFileSync(path.join(dir, "notes"), "utf8")).toBe("one");
      expect(agent.n).toBe(2);
    } finally {
      removeDir(dir);
    }
  });
});

it("a retried rollback or edit (its request id applied already) leaves changes made since in the object", async () => {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  const agent = { memory: ["a"] as string[] };
  const t = s.track(agent, { fields: ["memory"] });
  await t.save();
  const [q] = await s.append({ role: "user", content: "q" });
  const c = await s.checkpoint({ name: "c" });
  await s.setState({ memory: ["b"] });
  await s.rollback(c.id, { requestId: "rq1" });
  expect(agent.memory).toEqual(["a"]);
  agent.memory.push("work after the rollback");
  await s.rollback(c.id, { requestId: "rq1" });
  expect(agent.memory).toEqual(["a", "work after the rollback"]);
  // The first edit is a move: it loads the state (the change above was never saved).
  await s.edit(q!.id, { content: "q2" }, { requestId: "rq2" });
  expect(agent.memory).toEqual(["a"]);
  agent.memory.push("after the edit");
  await s.edit(q!.id, { content: "q2" }, { requestId: "rq2" });
  expect(agent.memory).toEqual(["a", "after the edit"]);
});
