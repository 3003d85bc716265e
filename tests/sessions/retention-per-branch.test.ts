// Retention per branch: keepLast counts each branch's own checkpoints, and automatic ones expire before manual ones.
import { describe, expect, it } from "vitest";
import type { SessionHandle } from "../../src/index.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** The session's live checkpoints, oldest first: a manual one by its name, an automatic one as "auto". */
async function live(s: SessionHandle): Promise<string[]> {
  const page = await s.listCheckpoints({ limit: 1000 });
  return page.items.map((c) => (c.auto ? "auto" : (c.name ?? "?"))).reverse();
}

describe("retention per branch", () => {
  it("expires automatic checkpoints before manual ones (as checkpoints are made and by prune)", async () => {
    const { fp } = dbs.open({ autoCheckpoint: { everyMessages: 1 } });
    const s = await fp.createSession({ userId: "u" });
    await s.setRetention({ keepLast: 2 });
    await s.checkpoint({ name: "manual1" });
    await s.append({ role: "user", content: "a" });
    await s.checkpoint({ name: "manual2" });
    await s.append({ role: "user", content: "b" });
    // The newest (automatic) one stays until the next checkpoint weighs it; both manual ones are the last two.
    expect(await live(s)).toEqual(["manual1", "manual2", "auto"]);
    await fp.prune({ vacuum: false });
    expect(await live(s)).toEqual(["manual1", "manual2", "auto"]);
    for (const content of ["c", "d", "e"]) await s.append({ role: "user", content });
    expect(await live(s)).toEqual(["manual1", "manual2", "auto"]);
    await s.checkpoint({ name: "manual3" });
    expect(await live(s)).toEqual(["manual2", "manual3"]);
    await fp.prune({ vacuum: false });
    expect(await live(s)).toEqual(["manual2", "manual3"]);
  });

  it("fills the last N with the newest automatic ones when manual ones are fewer", async () => {
    const { fp } = dbs.open({ autoCheckpoint: { everyMessages: 1 } });
    const s = await fp.createSession({ userId: "u" });
    await s.setRetention({ keepLast: 3 });
    await s.checkpoint({ name: "m1" });
    for (const content of ["a", "b", "c", "d"]) await s.append({ role: "user", content });
    const autos = (await s.listCheckpoints({ auto: true })).items.map((c) => c.id);
    expect(await live(s)).toEqual(["m1", "auto", "auto"]);
    expect(autos).toHaveLength(2);
    await fp.prune({ vacuum: false });
    expect((await s.listCheckpoints({ auto: true })).items.map((c) => c.id)).toEqual(autos);
  });

  it("keeps the last N of each branch: an edit's branch does not push out the checkpoints of the branch it left", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const [m] = await s.append({ role: "user", content: "q" });
    await s.setRetention({ keepLast: 2 });
    await s.checkpoint({ name: "X1" });
    await s.checkpoint({ name: "X2" });
    await s.edit(m!.id, { content: "q'" });
    await s.checkpoint({ name: "Y1" });
    await s.checkpoint({ name: "Y2" });
    expect(await live(s)).toEqual(["X1", "X2", "Y1", "Y2"]);
    await fp.prune({ vacuum: false });
    expect(await live(s)).toEqual(["X1", "X2", "Y1", "Y2"]);
    await s.checkpoint({ name: "Y3" });
    expect(await live(s)).toEqual(["X1", "X2", "Y2", "Y3"]);
    // Set anew, the policy is applied per branch at once too.
    await s.setRetention({ keepLast: 1 });
    expect(await live(s)).toEqual(["X2", "Y3"]);
    expect(await fp.verify()).toMatchObject({ ok: true });
  });
});
