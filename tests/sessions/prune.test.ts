// prune: expired checkpoints, state documents nothing points at and finished move journals go; the file shrinks.
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { NotFoundError, ValidationError, defineTool, type Forkpoint, type PruneReport } from "../../src/index.js";
import { makeTempDir, rejectionOf, removeDir } from "../helpers.js";
import { countRowsOf, dumpOf, onPostgres, openForkpoint, sqlOn } from "../fixtures/backend.js";

let dir: string;
let file: string;
let fp: Forkpoint;
const noop = defineTool<{ k: number }, null>({ name: "noop", run: async () => null, undo: async () => {} });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeEach(() => {
  dir = makeTempDir("forkpoint-prune-");
  file = path.join(dir, "db.sqlite");
  fp = openForkpoint({ path: file, tools: [noop] });
});
afterEach(async () => {
  await fp.close();
  removeDir(dir);
});

describe("prune", () => {
  it("deletes expired checkpoints, keeps live ones and those a branch forks from", async () => {
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "hi" });
    const live = await s.checkpoint({ name: "live" });
    const forever = await s.checkpoint({ name: "forever", expiresIn: "7d" });
    const forked = await s.checkpoint({ name: "forked", expiresIn: 600 });
    await s.append({ role: "user", content: "so the rollback forks a branch" });
    await s.rollback(forked.id);
    for (let i = 0; i < 3; i++) await s.checkpoint({ name: `gone ${i}`, expiresIn: 1 });
    await sleep(650);
    const report = await fp.prune();
    expect(report.checkpoints).toBe(3);
    expect((await s.listCheckpoints()).items.map((c) => c.id)).toEqual([forever.id, live.id]);
    const names = (await sqlOn<{ name: string }>(file, "SELECT name FROM checkpoints ORDER BY seq")).map((r) => r.name);
    expect(names).toEqual(["live", "forever", "forked"]);
    expect(await fp.verify()).toMatchObject({ ok: true });
    expect((await fp.prune()).checkpoints).toBe(0);
  });

  it("prunes one session when given its id, and emits a prune event with the report", async () => {
    const a = await fp.createSession({ userId: "u" });
    const b = await fp.createSession({ userId: "v" });
    await a.checkpoint({ expiresIn: 1 });
    await b.checkpoint({ expiresIn: 1 });
    await sleep(10);
    const seen: PruneReport[] = [];
    fp.on("prune", (r: PruneReport) => seen.push(r));
    const report = await fp.prune({ sessionId: a.id, vacuum: false });
    expect(report.checkpoints).toBe(1);
    expect(seen).toEqual([report]);
    expect((await countRowsOf(file)).checkpoints).toBe(1);
    expect((await fp.prune()).checkpoints).toBe(1);
  });

  it("drops the journals of finished moves, but keeps one with a step of unknown outcome", async () => {
    const s = await fp.createSession({ userId: "u" });
    const start = await s.checkpoint({ name: "start" });
    await s.invoke("noop", { k: 1 });
    const after = await s.checkpoint({ name: "after" });
    await s.rollback(start.id);
    await s.rollback(after.id);
    expect((await countRowsOf(file)).moves).toBe(2);
    await sqlOn(file, `UPDATE move_steps SET status = 'unknown' WHERE move_id = (SELECT id FROM moves ORDER BY seq LIMIT 1)`);
    const report = await fp.prune();
    expect(report.moves).toBe(1);
    const rows = await countRowsOf(file);
    expect([rows.moves, rows.move_steps]).toEqual([1, 1]);
    // The call whose undo outcome is unknown stays out of later moves, as before the prune.
    expect((await s.plan({ checkpointId: start.id })).unknown.length).toBe(1);
  });

  it("drops state documents nothing points at, and keeps every one in use", async () => {
    const s = await fp.createSession({ userId: "u" });
    await s.setState({ step: 1 });
    await s.checkpoint();
    await s.setState({ step: 2 });
    await sqlOn(file, `INSERT INTO state_snapshots (hash, body) VALUES ('${"ab".repeat(32)}', '{"orphan":true}')`);
    expect((await fp.prune()).snapshots).toBe(1);
    expect((await countRowsOf(file)).state_snapshots).toBe(2);
    expect(await s.getState()).toEqual({ step: 2 });
    expect(await fp.verify()).toMatchObject({ ok: true });
  });

  // PostgreSQL's VACUUM makes the space reusable without giving it back (VACUUM FULL would lock a shared database).
  it.skipIf(onPostgres)("gives the space back: the file shrinks after many expired checkpoints are pruned", async () => {
    const s = await fp.createSession({ userId: "u" });
    const metadata = { note: "x".repeat(2000) };
    for (let i = 0; i < 500; i++) await s.checkpoint({ name: `t${i}`, metadata, expiresIn: 1 });
    await sleep(10);
    const report = await fp.prune();
    expect(report.checkpoints).toBe(500);
    expect(report.bytesAfter).toBeLessThan(report.bytesBefore / 2);
    expect(await fp.verify()).toMatchObject({ ok: true });
  });

  it("validates its input and leaves the database unchanged on bad input", async () => {
    const s = await fp.createSession({ userId: "u" });
    await s.checkpoint({ expiresIn: 1 });
    await sleep(5);
    const before = await dumpOf(file);
    expect((await rejectionOf(fp.prune({ all: true } as never))).field).toBe("options");
    expect(await rejectionOf(fp.prune({ vacuum: "yes" } as never))).toBeInstanceOf(ValidationError);
    expect(await rejectionOf(fp.prune({ sessionId: "ses_nope" }))).toBeInstanceOf(NotFoundError);
    expect(await dumpOf(file)).toEqual(before);
  });

  it("works on an in-memory database", async () => {
    const mem = openForkpoint({ path: ":memory:" });
    try {
      const s = await mem.createSession({ userId: "u" });
      await s.checkpoint({ expiresIn: 1 });
      await sleep(5);
      const report = await mem.prune();
      expect(report.checkpoints).toBe(1);
      expect(report.bytesAfter).toBeGreaterThan(0);
    } finally {
      await mem.close();
    }
  });

  it("reports whether it rebuilt the file", async () => {
    const s = await fp.createSession({ userId: "u" });
    await s.checkpoint({ expiresIn: 1 });
    await sleep(5);
    expect(await fp.prune({ vacuum: false })).toMatchObject({ checkpoints: 1, vacuumed: false });
    expect((await fp.prune()).vacuumed).toBe(true);
  });
});
