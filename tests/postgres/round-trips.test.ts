// Round trips are what a unit costs on a network. A chat turn on PostgreSQL is four statements on a pipelining client:
// the first turn a server makes on a session it has not written reads its head (BEGIN with its locks and the read, then the inserts as one
// statement with COMMIT: two round trips); after that the server starts from the head it wrote, which the server checks
// in the same round trip (BEGIN, the check, the inserts, COMMIT: one round trip, one socket write). A session another
// server wrote in between fails the check and the turn runs again from a fresh read. What the batched inserts carry
// comes back exactly.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { freshPgDatabase, pgServer } from "../fixtures/postgres-database.js";

const url = await pgServer();

/** A pool on a fresh database that records the text of every statement its clients send. */
async function recordingPool() {
  const pool = new pg.Pool({ connectionString: await freshPgDatabase(), max: 2 });
  const sent: string[] = [];
  pool.on("connect", (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
    (client as unknown as { query: unknown }).query = (config: unknown, ...rest: unknown[]) => {
      sent.push(typeof config === "string" ? config : (config as { text: string }).text);
      return query(config, ...rest);
    };
  });
  return { pool, sent };
}

describe.skipIf(!url)("round trips on PostgreSQL", () => {
  it("a turn is one round trip once the server knows the head, two otherwise; text and metadata come back exactly", async () => {
    const pool = new pg.Pool({ connectionString: await freshPgDatabase(), max: 2, pipeline: true } as pg.PoolConfig);
    const sent: string[] = [];
    /** Per round trip, the statements sent while none of its earlier ones had answered. */
    const trips: string[][] = [];
    let pending = 0;
    /** What the socket saw: "w" per write, "r" per answer read ("ww r ww r" is two round trips on the wire). */
    let wire = "";
    let flushes = 0;
    pool.on("connect", (client) => {
      const stream = (client as unknown as { connection: { stream: import("node:net").Socket } }).connection.stream;
      const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
      (stream as unknown as { write: unknown }).write = (...args: unknown[]) => ((wire += "w"), write(...args));
      // What reaches the kernel: one call per flush of the stream's buffer (a corked run of writes is one).
      for (const method of ["_write", "_writev"] as const) {
        const original = (stream as unknown as Record<string, (...args: unknown[]) => unknown>)[method]!.bind(stream);
        (stream as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => (flushes++, original(...args));
      }
      // Ahead of the driver's own listener, which answers a read with the next write at once.
      stream.prependListener("data", () => (wire += "r"));
      const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
      (client as unknown as { query: unknown }).query = (config: unknown, ...rest: unknown[]) => {
        const text = typeof config === "string" ? config : (config as { text: string }).text;
        sent.push(text);
        if (pending === 0) trips.push([]);
        trips.at(-1)!.push(text);
        pending++;
        const answer = query(config, ...rest);
        const done = () => void pending--;
        answer.then(done, done);
        return answer;
      };
    });
    const fp = openForkpoint({ postgres: pool });
    const other = openForkpoint({ postgres: pool.options.connectionString! });
    // A read's COMMIT may still be on its way (its caller does not wait for it): counting starts once it is answered.
    const reset = async () => {
      while (pending > 0) await new Promise((r) => setImmediate(r));
      sent.length = 0;
      trips.length = 0;
      wire = "";
      flushes = 0;
    };
    try {
      // A session this server has never written (another made it): its first turn reads the head.
      const s = await fp.getSession((await other.createSession({ userId: "u" })).id, { userId: "u" });
      await reset();
      await s.turn([{ role: "user", content: "warm" }], { name: "warm" });
      // The first turn on the session: its head is read first.
      expect(sent).toHaveLength(4);
      expect(trips.map((t) => t.length)).toEqual([2, 2]);
      expect(wire.split(/r+/).filter(Boolean)).toHaveLength(2);
      expect(flushes).toBe(2);
      expect(trips[0]![0]).toMatch(/^BEGIN .*pg_advisory_xact_lock/);
      expect(trips[0]![1]).toMatch(/^SELECT s\.seq/);
      const hostile = "it's a $1 \\x00ff -- not a comment; DROP TABLE entries; \u00e9\u{1F600} \\' ''";
      await reset();
      const turn = await s.turn(
        [
          { role: "user", content: hostile, metadata: { n: -1.5e-7, big: 2 ** 53 - 1, t: true, nul: null, s: "$2" } },
          { role: "assistant", content: "ok" },
        ],
        { name: "it's $3" },
      );
      expect(sent).toHaveLength(4);
      expect(sent[1]).toMatch(/^SELECT WHERE CASE WHEN EXISTS \(.*ELSE forkpoint_expect_current\(false\) END$/s);
      // The two messages as one two-row insert, the checkpoint beside it.
      expect(sent[2]).toMatch(/^WITH w0 AS \(INSERT INTO entries .* VALUES \(\$1, .*\), \(\$16, .*\)\) INSERT INTO checkpoints /s);
      expect(sent[3]).toBe("COMMIT");
      expect(trips.map((t) => t.length)).toEqual([4]);
      // Every statement of the turn leaves before any answer comes back, in one write to the socket.
      expect(wire).toMatch(/^w+r+$/);
      expect(flushes).toBe(1);
      // A move changes more than the head: the session's state is read ahead of its COMMIT, not by the next turn. That
      // read carries the entry a rollback's branch forks from (it has none of its own yet): its first turn is one trip.
      const [warm] = (await s.listCheckpoints({ name: "warm" })).items;
      await s.rollback(warm!.id);
      await reset();
      await s.turn([{ role: "user", content: "on the new branch" }]);
      expect(trips.map((t) => t.length)).toEqual([4]);
      expect(sent[1]).toMatch(/^SELECT WHERE CASE WHEN EXISTS \(.*ELSE forkpoint_expect_current\(false\) END$/s);
      await reset();
      await s.turn([{ role: "user", content: "again" }]);
      expect(trips.map((t) => t.length)).toEqual([4]);
      // A timeline page: BEGIN with the session's read, the page in one statement (whichever walk its times allow),
      // COMMIT. A read-only transaction's COMMIT changes nothing the caller was given: it has the page before the answer.
      await reset();
      expect((await s.timeline({ limit: 3 })).items).toHaveLength(3);
      expect(trips.map((t) => t.length)).toEqual([2, 1, 1]);
      expect(trips[2]).toEqual(["COMMIT"]);
      expect(pending).toBe(1);
      await s.switchBranch(turn.checkpoint.branchId);
      // Another server writes to the session: this one's next turn finds its head stale and runs again from a read.
      await (await other.getSession(s.id, { userId: "u" })).append({ role: "user", content: "from the other server" });
      await reset();
      const after = await s.turn([{ role: "user", content: "after" }], { name: "after" });
      expect(sent.filter((t) => t === "COMMIT")).toHaveLength(2);
      expect(sent.filter((t) => /^SELECT s\.seq/.test(t))).toHaveLength(1);
      expect((await s.history()).map((m) => [m.position, m.content])).toEqual([
        [1, "warm"],
        [2, hostile],
        [3, "ok"],
        [4, "from the other server"],
        [5, "after"],
      ]);
      expect(after.checkpoint.position).toBe(5);
      const asked = (await s.history({ branchId: turn.checkpoint.branchId })).find((m) => m.position === 2);
      expect(asked!.content).toBe(hostile);
      expect(asked!.metadata).toEqual({ n: -1.5e-7, big: 2 ** 53 - 1, t: true, nul: null, s: "$2" });
      expect((await s.restore(turn.checkpoint.id)).checkpoint.name).toBe("it's $3");
      expect(await fp.verify()).toMatchObject({ ok: true });
    } finally {
      await other.close();
      await fp.close();
      await pool.end();
    }
  });

  it("a move on a session with tools reads its running moves and calls in one statement", async () => {
    const { pool, sent } = await recordingPool();
    const fp = openForkpoint({ postgres: pool, tools: [writeFileTool()] });
    try {
      const s = await fp.createSession({ userId: "u" });
      const cp = await s.checkpoint({ name: "before" });
      await s.invoke("write_file", { path: `${tempDir("forkpoint-pg-trips-")}/a.txt`, text: "a" });
      sent.length = 0;
      expect((await s.rollback(cp.id)).undone).toHaveLength(1);
      const activity = sent.filter((t) => /\bFROM (moves|running_calls)\b/.test(t) && /^\s*SELECT/.test(t));
      expect(activity).toHaveLength(1);
      expect(activity[0]).toMatch(/FROM moves WHERE status = 'running'.*FROM running_calls/s);
    } finally {
      await fp.close();
      await pool.end();
    }
  });

  it("an import (and so a clone) reads as often for 400 entries and 100 states as for 10 and 5: ids and states go in bulk", async () => {
    const { pool, sent } = await recordingPool();
    /** Reads sent (the inserts are batched by design: a few hundred rows to a statement). */
    const reads = () => sent.filter((text) => /^\s*SELECT\b/i.test(text)).length;
    const fp = openForkpoint({ postgres: pool });
    try {
      /** Statements an import of a session of `n` messages takes. */
      const importOf = async (n: number, states: number) => {
        const s = await fp.createSession({ userId: "u" });
        await s.append(Array.from({ length: n }, (_, i) => ({ role: "user", content: `m${i}` })));
        for (let i = 0; i < states; i++) await s.setState({ step: i, at: n });
        const doc = await fp.exportSession(s.id, { userId: "u" });
        await fp.deleteSession(s.id, { userId: "u" });
        sent.length = 0;
        await fp.importSession(doc, { userId: "u" });
        return reads();
      };
      const few = await importOf(10, 5);
      expect(await importOf(400, 100)).toBe(few);
    } finally {
      await fp.close();
      await pool.end();
    }
  });
});
