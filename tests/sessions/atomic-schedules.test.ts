// Guarded blocks of several openers interleaved step by step (found by random schedules): a failed block's writes never
// come back, and a block's rollback goes no further back than where the blocks that failed before it went.
import { expect, it } from "vitest";
import type { SessionHandle } from "../../src/index.js";
import { runSchedule } from "../fixtures/atomic-schedule.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

const cases: { schedule: string; history: string[]; why: string }[] = [
  {
    // B's second block begins on its first one's rollback branch, which forked after A's write.
    schedule: "A+ Aw B+ Bw B! B+ A! B!",
    history: [],
    why: "a checkpoint on a branch forked among a failed block's writes",
  },
  {
    schedule: "A+ Aw D+ Dw B+ Bw A. B! C+ A+ Cw Aw Dw Dw D! C! A. C+ C+ Cw C. Cw C!",
    history: ["A:0"],
    why: "a checkpoint whose lineage holds writes of a block that failed first",
  },
  {
    // B's outer block fails where its inner one's rollback left the session (no branch made): its writes begin at its
    // checkpoint, not at the start of the branch it began on, so A's earlier checkpoint holds none of them.
    schedule: "A+ Aw C+ B+ Cw C! B+ Bw B! B! A!",
    history: [],
    why: "a checkpoint before a failed block whose rollback made no branch",
  },
  {
    // D's checkpoint is among B's failed writes; B's rollback went among A's, which failed later: D follows both.
    schedule: "A+ Aw B+ C+ Aw C! Bw D+ B! A! D!",
    history: [],
    why: "a checkpoint among failed writes whose rollback went among another's",
  },
  { schedule: "B+ C+ C+ D+ Cw C! Cw D+ Bw C! B! D! D.", history: [], why: "a nested block's checkpoint among chained failed writes" },
  {
    // B's rollback forks at C's checkpoint while C runs; A writes there and begins a block; C fails, then A's block.
    schedule: "C+ B+ Bw B! A+ Aw A. A+ Aw C! Aw A!",
    history: [],
    why: "a checkpoint on a branch another block's rollback forked at the failed block's checkpoint",
  },
  { schedule: "C+ A+ Aw A. A+ Aw C! Aw A!", history: [], why: "a checkpoint among what a failed block took back on its own branch" },
  {
    // The branch the last block began on forks the first failed block's rollback branch before anything was written.
    schedule: "A+ C+ B+ A+ C+ Aw A! A. B+ Cw B! B. C! Cw C. C+ C+ C! C.",
    history: ["C:2"],
    why: "a checkpoint after no failed write, though an ancestor branch is continued",
  },
];

for (const { schedule, history, why } of cases)
  it(`${why}: ${schedule}`, async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "start" });
    const handles: Record<string, SessionHandle> = {};
    for (const who of new Set(schedule.match(/[A-Z]/g)))
      handles[who] = who === "A" ? s : await dbs.open({ path }).fp.getSession(s.id, { userId: "u" });
    await runSchedule(schedule, handles);
    expect((await s.history()).map((m) => m.content)).toEqual(["start", ...history]);
    expect(Object.keys((await s.getState()) ?? {}).sort()).toEqual([...history].sort());
    expect((await fp.verify()).ok).toBe(true);
  });

it("a block on a branch a rollback made to a checkpoint inside a failed block rolls back to its own checkpoint", async () => {
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  await s.append({ role: "user", content: "start" });
  let inside: { id: string } | undefined;
  const failed = s.atomic(async () => {
    await s.append({ role: "user", content: "F1" });
    inside = await s.checkpoint({ name: "inside F" });
    await s.append({ role: "user", content: "F2" });
    throw new Error("F failed");
  });
  await expect(failed).rejects.toThrow("F failed");
  // The user brings F's first write back on purpose, and goes on from there.
  await s.rollback(inside!.id);
  await s.append({ role: "user", content: "kept" });
  await expect(
    s.atomic(async () => {
      await s.append({ role: "user", content: "G1" });
      throw new Error("G failed");
    }),
  ).rejects.toThrow("G failed");
  expect((await s.history()).map((m) => m.content)).toEqual(["start", "F1", "kept"]);
});

it("a block begun after a failure on a branch entered as it is rolls back to its own checkpoint", async () => {
  const { fp, path } = dbs.open();
  const a = await fp.createSession({ userId: "u" });
  await a.append({ role: "user", content: "start" });
  const b = await dbs.open({ path }).fp.getSession(a.id, { userId: "u" });
  let bFailed!: () => void;
  const bDone = new Promise<void>((resolve) => (bFailed = resolve));
  const failed = a.atomic(async () => {
    await a.append({ role: "user", content: "A" });
    await bDone;
    throw new Error("A failed");
  });
  // B's block fails after A's write: its rollback branch holds it, made while A's block ran.
  await new Promise((resolve) => setTimeout(resolve, 0));
  while ((await b.history()).length < 2) await new Promise((resolve) => setTimeout(resolve, 5));
  await expect(
    b.atomic(async () => {
      await b.append({ role: "user", content: "B" });
      throw new Error("B failed");
    }),
  ).rejects.toThrow("B failed");
  const made = (await b.info()).currentBranchId;
  bFailed();
  await expect(failed).rejects.toThrow("A failed");
  // That branch is entered as it is (another opener made it), and a block begun there afterwards goes back there.
  await b.switchBranch(made);
  expect((await b.history()).map((m) => m.content)).toEqual(["start", "A"]);
  await expect(
    b.atomic(async () => {
      await b.append({ role: "user", content: "G" });
      throw new Error("G failed");
    }),
  ).rejects.toThrow("G failed");
  expect((await b.history()).map((m) => m.content)).toEqual(["start", "A"]);
});
