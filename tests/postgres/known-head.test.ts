// A server starts a session's writes from the head it last wrote (one round trip): whatever another server did to the
// session in between (a message, a rollback, an edit, a title, a deletion) must be seen, on the branch it made current.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { NotFoundError, openForkpoint } from "../../src/index.js";
import { freshPgDatabase, pgServer } from "../fixtures/postgres-database.js";

const url = await pgServer();

async function twoServers() {
  const db = await freshPgDatabase();
  const a = openForkpoint({ postgres: db });
  const b = openForkpoint({ postgres: db });
  const onA = await a.createSession({ userId: "u", title: "t" });
  await onA.turn([{ role: "user", content: "one" }], { name: "one" });
  await onA.turn([{ role: "user", content: "two" }], { name: "two" });
  const onB = await b.getSession(onA.id, { userId: "u" });
  return { a, b, onA, onB, close: () => Promise.all([a.close(), b.close()]) };
}

/** A pipelining pool that records the text of every statement its clients send. */
async function countingPool() {
  const db = await freshPgDatabase();
  const sent: string[] = [];
  const pool = new pg.Pool({ connectionString: db, max: 2, pipeline: true } as pg.PoolConfig);
  pool.on("connect", (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
    (client as unknown as { query: unknown }).query = (config: unknown, ...rest: unknown[]) => {
      sent.push(typeof config === "string" ? config : (config as { text: string }).text);
      return query(config, ...rest);
    };
  });
  return { db, pool, sent };
}

/** What `call` sent: its COMMITs (a failed check's rolls back), its checks of a known head, and its reads of the head. */
async function costOf(sent: string[], call: () => Promise<unknown>) {
  sent.length = 0;
  await call();
  return {
    commits: sent.filter((t) => t === "COMMIT").length,
    checks: sent.filter((t) => t.endsWith("ELSE forkpoint_expect_current(false) END")).length,
    reads: sent.filter((t) => /^SELECT s\.seq/.test(t)).length,
  };
}

const contents = async (s: { history(): Promise<{ content: unknown }[]> }) => (await s.history()).map((m) => m.content);

describe.skipIf(!url)("a server's known head on PostgreSQL", () => {
  it("sees another server's rollback: the next turn lands on the branch it made current", async () => {
    const { a, onA, onB, close } = await twoServers();
    try {
      const one = (await onB.listCheckpoints({ name: "one" })).items[0];
      const moved = await onB.rollback(one!.id);
      const turn = await onA.turn([{ role: "user", content: "after rollback" }]);
      expect(turn.checkpoint.branchId).toBe(moved.branch.id);
      expect(await contents(onA)).toEqual(["one", "after rollback"]);
      expect((await a.verify()).ok).toBe(true);
    } finally {
      await close();
    }
  });

  it("sees another server's edit and title change", async () => {
    const { onA, onB, close } = await twoServers();
    try {
      const [first] = await onB.history();
      await onB.edit(first!.id, { content: "uno" });
      await onB.update({ title: "renamed" });
      await onA.turn([{ role: "user", content: "three" }]);
      expect(await contents(onB)).toEqual(["uno", "three"]);
      expect((await onA.info()).title).toBe("renamed");
    } finally {
      await close();
    }
  });

  it("sees its own moves between turns", async () => {
    const { onA, close } = await twoServers();
    try {
      const one = (await onA.listCheckpoints({ name: "one" })).items[0];
      await onA.rollback(one!.id);
      await onA.turn([{ role: "user", content: "again" }]);
      expect(await contents(onA)).toEqual(["one", "again"]);
      await onA.undo();
      await onA.turn([{ role: "user", content: "three" }]);
      expect(await contents(onA)).toEqual(["one", "two", "three"]);
    } finally {
      await close();
    }
  });

  it("refuses a turn on a session another server deleted, writing nothing", async () => {
    const { a, onA, b, close } = await twoServers();
    try {
      await b.deleteSession(onA.id, { userId: "u" });
      await expect(onA.turn([{ role: "user", content: "lost" }])).rejects.toBeInstanceOf(NotFoundError);
      expect((await a.listSessions({ userId: "u" })).items).toHaveLength(0);
    } finally {
      await close();
    }
  });

  it("keeps positions gapless and the chain whole when two servers take turns at once", async () => {
    const { a, onA, onB, close } = await twoServers();
    try {
      await Promise.all(
        Array.from({ length: 20 }, (_, i) => (i % 2 ? onA : onB).turn([{ role: "user", content: `m${i}` }], { name: `c${i}` })),
      );
      const history = await onA.history();
      expect(history.map((m) => m.position)).toEqual(Array.from({ length: 22 }, (_, i) => i + 1));
      expect(new Set(history.map((m) => m.content)).size).toBe(22);
      expect((await a.verify()).ok).toBe(true);
    } finally {
      await close();
    }
  });

  it("reads first, without failing checks again and again, while another server keeps writing the session", async () => {
    const { db, pool, sent } = await countingPool();
    const a = openForkpoint({ postgres: pool });
    const b = openForkpoint({ postgres: db });
    try {
      const onA = await a.createSession({ userId: "u" });
      const onB = await b.getSession(onA.id, { userId: "u" });
      await onA.turn([{ role: "user", content: "a0" }]);
      const turnOnA = (content: string) => costOf(sent, () => onA.turn([{ role: "user", content }]));
      // Undisturbed: one check, no read.
      expect(await turnOnA("a1")).toEqual({ commits: 1, checks: 1, reads: 0 });
      // B writes: A's check fails once, and A reads.
      await onB.turn([{ role: "user", content: "b1" }]);
      expect(await turnOnA("a2")).toEqual({ commits: 2, checks: 1, reads: 1 });
      // While B keeps writing, A reads first, with no failed check.
      for (let i = 3; i < 6; i++) {
        await onB.turn([{ role: "user", content: `b${i}` }]);
        expect(await turnOnA(`a${i}`)).toEqual({ commits: 1, checks: 0, reads: 1 });
      }
      // B stops: one read finds the session as A left it, then A starts from its head again.
      expect(await turnOnA("a6")).toEqual({ commits: 1, checks: 0, reads: 1 });
      expect(await turnOnA("a7")).toEqual({ commits: 1, checks: 1, reads: 0 });
      expect((await onA.history()).map((m) => m.content)).toEqual(["a0", "a1", "b1", "a2", "b3", "a3", "b4", "a4", "b5", "a5", "a6", "a7"]);
      expect((await a.verify()).ok).toBe(true);
    } finally {
      await Promise.all([a.close(), b.close()]);
      await pool.end();
    }
  });

  it("sees another server's checkpoint: the next one is never before it", async () => {
    const { db, pool, sent } = await countingPool();
    const a = openForkpoint({ postgres: pool });
    const b = openForkpoint({ postgres: db });
    try {
      const onA = await a.createSession({ userId: "u" });
      await onA.turn([{ role: "user", content: "a0" }], { name: "a0" });
      expect(await costOf(sent, () => onA.turn([{ role: "user", content: "a1" }], { name: "a1" }))).toEqual({
        commits: 1,
        checks: 1,
        reads: 0,
      });
      const theirs = await (await b.getSession(onA.id, { userId: "u" })).checkpoint({ name: "b" });
      expect(await costOf(sent, () => onA.turn([{ role: "user", content: "a2" }], { name: "a2" }))).toEqual({
        commits: 2,
        checks: 1,
        reads: 1,
      });
      const ours = (await onA.listCheckpoints({ name: "a2" })).items[0]!;
      expect(ours.createdAt.getTime()).toBeGreaterThanOrEqual(theirs.createdAt.getTime());
      expect((await onA.timeline({ limit: 3 })).items.map((i) => i.summary)).toEqual(['checkpoint "a2"', "user message", 'checkpoint "b"']);
    } finally {
      await Promise.all([a.close(), b.close()]);
      await pool.end();
    }
  });
});
