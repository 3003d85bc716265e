// summary() analytics: live checkpoints counted by name, the first and last creation times, and the span between.
import { describe, expect, it } from "vitest";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

describe("summary analytics", () => {
  it("are empty and null without checkpoints", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    expect(await s.summary()).toMatchObject({
      checkpointsByName: {},
      firstCheckpointAt: null,
      lastCheckpointAt: null,
      checkpointSpanMs: null,
    });
  });

  it("count live checkpoints per name (unnamed ones left out) and span the first to the last", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const first = await s.checkpoint({ name: "plan" });
    await s.checkpoint({ name: "draft" });
    await s.checkpoint();
    await s.checkpoint({ name: "plan" });
    await s.checkpoint({ name: "__proto__" });
    const gone = await s.checkpoint({ name: "draft" });
    const last = await s.checkpoint({ name: "plan" });
    await s.expire(gone.id);
    const sum = await s.summary();
    expect(sum.checkpointsByName).toEqual(
      Object.fromEntries([
        ["plan", 3],
        ["draft", 1],
        ["__proto__", 1],
      ]),
    );
    expect(Object.keys(sum.checkpointsByName).sort()).toEqual(["__proto__", "draft", "plan"]);
    expect(sum.checkpoints).toBe(6);
    expect(sum.firstCheckpointAt).toEqual(first.createdAt);
    expect(sum.lastCheckpointAt).toEqual(last.createdAt);
    expect(sum.checkpointSpanMs).toBe(last.createdAt.getTime() - first.createdAt.getTime());
  });

  it("a single checkpoint spans 0 ms", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const cp = await s.checkpoint({ name: "only" });
    expect(await s.summary()).toMatchObject({
      checkpointsByName: { only: 1 },
      firstCheckpointAt: cp.createdAt,
      lastCheckpointAt: cp.createdAt,
      checkpointSpanMs: 0,
    });
  });
});
