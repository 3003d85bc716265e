// Retention: a session's policy keeps the first, the last N of each branch, the newest of each name, the recent ones
// and every fork point; the others expire as checkpoints are made, when the policy is set, and by prune.
import { describe, expect, it } from "vitest";
import { NotFoundError, ValidationError, type SessionHandle } from "../../src/index.js";
import { dumpOf, onPostgres, sqlOn } from "../fixtures/backend.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function liveNames(s: SessionHandle): Promise<(string | null)[]> {
  const out: (string | null)[] = [];
  let cursor: string | null = null;
  do {
    const page = await s.listCheckpoints({ limit: 1000, cursor });
    out.push(...page.items.map((c) => c.name));
    cursor = page.nextCursor;
  } while (cursor);
  return out.reverse();
}

describe("retention", () => {
  it("keepLast keeps the last N as checkpoints are made", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.setRetention({ keepLast: 3 });
    for (let i = 1; i <= 8; i++) {
      await s.append({ role: "user", content: `m${i}` });
      await s.checkpoint({ name: `c${i}` });
    }
    expect(await liveNames(s)).toEqual(["c6", "c7", "c8"]);
    expect((await s.summary()).checkpoints).toBe(3);
  });

  it("keepFirst and onePerName keep the first and the newest of each name (unnamed ones as one name)", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.setRetention({ keepFirst: true, keepLast: 1, onePerName: true });
    for (const name of ["start", "plan", "draft", "plan", undefined, "draft", undefined, "plan", "final"]) {
      await s.checkpoint(name === undefined ? {} : { name });
    }
    expect(await liveNames(s)).toEqual(["start", "draft", null, "plan", "final"]);
  });

  it("onePerName weighs checkpoints made before the policy was set, and after it, the same way", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const other = await fp.createSession({ userId: "u" });
    const names = ["start", "plan", "draft", "plan", undefined, "draft"];
    for (const name of names) {
      await s.checkpoint(name === undefined ? {} : { name });
      await other.checkpoint(name === undefined ? {} : { name });
    }
    await s.setRetention({ keepFirst: true, keepLast: 1, onePerName: true });
    for (const name of [undefined, "plan", "final"]) await s.checkpoint(name === undefined ? {} : { name });
    expect(await liveNames(s)).toEqual(["start", "draft", null, "plan", "final"]);
    expect(await liveNames(other)).toEqual(names.map((n) => n ?? null));
    if (onPostgres) return;
    // On SQLite the name index holds only checkpoints of sessions with a policy: the others write no page of it.
    const rows = await sqlOn<{ session_id: string; n: number }>(
      path,
      `SELECT session_id, count(*) AS n FROM checkpoints WHERE weighed = 1 GROUP BY session_id`,
    );
    expect(rows).toEqual([{ session_id: s.id, n: 9 }]);
  });

  it("turn() with a checkpoint applies it too", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.setRetention({ keepLast: 2 });
    for (let i = 1; i <= 5; i++) await s.turn([{ role: "user", content: `m${i}` }], { name: `t${i}` });
    expect(await liveNames(s)).toEqual(["t4", "t5"]);
  });

  it("edit and regenerate with a checkpoint apply it too (each new branch keeps its own last N)", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const [q, a] = await s.append([
      { role: "user", content: "q" },
      { role: "assistant", content: "a" },
    ]);
    await s.setRetention({ keepLast: 1, onePerName: true });
    await s.checkpoint({ name: "v" });
    await s.checkpoint({ name: "w" });
    expect(await liveNames(s)).toEqual(["v", "w"]);
    // The new "v" (on the regenerated branch) takes the place of the old one, which no rule keeps any more.
    await s.regenerate(a!.id, { content: "a2" }, { checkpoint: { name: "v" } });
    expect(await liveNames(s)).toEqual(["w", "v"]);
    await s.checkpoint({ name: "x" });
    await s.edit(q!.id, { content: "q2" }, { checkpoint: { name: "v" } });
    expect(await liveNames(s)).toEqual(["w", "x", "v"]);
    expect(await fp.verify()).toMatchObject({ ok: true });
  });

  it("automatic checkpoints apply it too", async () => {
    const { fp } = dbs.open({ autoCheckpoint: { everyMessages: 1 } });
    const s = await fp.createSession({ userId: "u" });
    await s.setRetention({ keepLast: 2 });
    for (let i = 1; i <= 5; i++) await s.append({ role: "user", content: `m${i}` });
    expect((await s.listCheckpoints()).items.length).toBe(2);
  });

  it("keepFor keeps the recent ones; older ones go on the next checkpoint", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.setRetention({ keepFor: 300 });
    await s.checkpoint({ name: "old1" });
    await s.checkpoint({ name: "old2" });
    await sleep(350);
    await s.checkpoint({ name: "new" });
    expect(await liveNames(s)).toEqual(["new"]);
  });

  it("never removes a checkpoint a branch forks from; it stays readable through the branch", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "a" });
    const fork = await s.checkpoint({ name: "fork" });
    await s.append({ role: "user", content: "b" });
    await s.rollback(fork.id);
    await s.setRetention({ keepLast: 1 });
    for (let i = 0; i < 4; i++) await s.checkpoint({ name: `n${i}` });
    expect(await liveNames(s)).toEqual(["fork", "n3"]);
    // What the policy expired still verifies until prune deletes it (the checksum covers the new expiry).
    expect(await fp.verify()).toMatchObject({ ok: true, problems: [] });
    const r = await fp.prune();
    expect(r.checkpoints).toBe(3);
    expect((await s.restore(fork.id)).history.map((m) => m.content)).toEqual(["a"]);
  });

  it("setting a policy applies it at once; null or {} clears it", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    for (let i = 0; i < 5; i++) await s.checkpoint({ name: `c${i}` });
    await s.setRetention({ keepFirst: true, keepLast: 2 });
    expect(await liveNames(s)).toEqual(["c0", "c3", "c4"]);
    await s.setRetention(null);
    for (let i = 5; i < 8; i++) await s.checkpoint({ name: `c${i}` });
    expect(await liveNames(s)).toEqual(["c0", "c3", "c4", "c5", "c6", "c7"]);
    await s.setRetention({ keepLast: 1 });
    await s.setRetention({});
    await s.checkpoint({ name: "c8" });
    expect(await liveNames(s)).toEqual(["c7", "c8"]);
  });

  it("prune applies the policy in full and deletes what it drops", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    const other = await fp.createSession({ userId: "u" });
    await s.setRetention({ keepFor: 1000, keepLast: 1 });
    for (let i = 0; i < 4; i++) await s.checkpoint({ name: `c${i}`, metadata: { i } });
    await other.checkpoint({ name: "kept" });
    await sleep(1100);
    // Nothing was made since they aged: prune weighs them.
    expect(await liveNames(s)).toEqual(["c0", "c1", "c2", "c3"]);
    const report = await fp.prune({ vacuum: false });
    expect(report.checkpoints).toBe(3);
    expect(await liveNames(s)).toEqual(["c3"]);
    expect(await liveNames(other)).toEqual(["kept"]);
    // Their metadata index rows went with them.
    const rows = await sqlOn<{ n: number }>(path, `SELECT count(*) AS n FROM checkpoint_metadata`);
    expect(Number(rows[0]!.n)).toBe(1);
  });

  it("the newest checkpoint survives until the next one, through prune and a policy set anew", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.setRetention({ keepFirst: true });
    for (let i = 0; i < 3; i++) await s.checkpoint({ name: `c${i}` });
    expect(await liveNames(s)).toEqual(["c0", "c2"]);
    await fp.prune({ vacuum: false });
    expect(await liveNames(s)).toEqual(["c0", "c2"]);
    await s.checkpoint({ name: "c3" });
    expect(await liveNames(s)).toEqual(["c0", "c3"]);

    // Keeping none of the last: the newest still waits for the next checkpoint, whether set or pruned.
    const t = await fp.createSession({ userId: "u" });
    for (let i = 0; i < 3; i++) await t.checkpoint({ name: `t${i}` });
    await t.setRetention({ keepLast: 0 });
    expect(await liveNames(t)).toEqual(["t2"]);
    await fp.prune({ vacuum: false });
    expect(await liveNames(t)).toEqual(["t2"]);
    await t.checkpoint({ name: "t3" });
    expect(await liveNames(t)).toEqual(["t3"]);
  });

  it("validates the policy and leaves the database unchanged on bad input", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.checkpoint({ name: "a" });
    const ghost = await fp.createSession({ userId: "u" });
    await fp.deleteSession(ghost.id, { userId: "u" });
    const before = await dumpOf(path);
    for (const bad of [
      { keepLast: -1 },
      { keepLast: 1.5 },
      { keepLast: "3" },
      { keepFor: "soon" },
      { keepFor: 0 },
      { keepFirst: "yes" },
      { keepEvery: 2 },
      [],
      "7d",
    ]) {
      const e = await s.setRetention(bad as never).catch((x: unknown) => x);
      expect(e, JSON.stringify(bad)).toBeInstanceOf(ValidationError);
    }
    await expect(ghost.setRetention({ keepLast: 1 })).rejects.toBeInstanceOf(NotFoundError);
    expect(await dumpOf(path)).toEqual(before);
  });

  it("costs the same per checkpoint however many the session keeps (reads bounded by the policy)", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.setRetention({ keepLast: 1, onePerName: true, keepFirst: true });
    // 300 distinct names kept by onePerName: the weighing of a new checkpoint still reads a few rows by index.
    for (let i = 0; i < 300; i++) await s.checkpoint({ name: `n${i}` });
    for (let i = 0; i < 20; i++) await s.checkpoint({ name: "same" });
    const names = await liveNames(s);
    expect(names.length).toBe(301);
    expect(names.filter((n) => n === "same")).toEqual(["same"]);
  });

  it("weighs a checkpoint with index range reads only (SQLite query plans of the weighing statements)", async () => {
    if (onPostgres) return; // The statements are the same shape there; the behaviour above runs on both.
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "u" });
    await s.checkpoint({ name: "a" });
    const live = "(expires_at IS NULL OR expires_at > 0)";
    const statements = [
      // The one keepFor weighs next: after the watermark time, oldest first.
      `SELECT id FROM checkpoints INDEXED BY checkpoints_session_weighed_created WHERE session_id = $1 AND weighed = 1 AND created_at > $2 AND created_at <= $3 AND ${live} ORDER BY created_at, seq LIMIT 16`,
      // The Nth newest live one (keepLast).
      `SELECT id FROM checkpoints INDEXED BY checkpoints_session_user_seq WHERE user_id = $1 AND session_id = $2 AND ${live} ORDER BY seq DESC LIMIT 1 OFFSET 10`,
      // A branch's newest of one kind (keepLast, manual ones before automatic ones).
      `SELECT id FROM checkpoints INDEXED BY checkpoints_branch_kind_seq WHERE branch_id = $1 AND weighed = 1 AND auto = $2 AND ${live} ORDER BY seq DESC LIMIT 3`,
      // A branch's newest below a seq (the one a new checkpoint follows).
      `SELECT id FROM checkpoints INDEXED BY checkpoints_branch WHERE branch_id = $1 AND seq < $2 AND ${live} ORDER BY seq DESC LIMIT 1`,
      // The newest of a name (onePerName).
      `SELECT id FROM checkpoints INDEXED BY checkpoints_session_name_seq WHERE session_id = $1 AND weighed = 1 AND name = $2 AND seq < $3 AND ${live} ORDER BY seq DESC LIMIT 1`,
    ];
    for (const text of statements) {
      const plan = (
        await sqlOn<{ detail: string }>(path, `EXPLAIN QUERY PLAN ${text}`, ["x", "y", 3].slice(0, text.match(/\$\d/g)!.length))
      )
        .map((r) => r.detail)
        .join("\n");
      expect(plan, text).toMatch(/^SEARCH checkpoints USING INDEX/);
      expect(plan, text).not.toMatch(/TEMP B-TREE|SCAN/);
    }
  });
});
