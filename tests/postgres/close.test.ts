// close() on PostgreSQL: calls already made when it is called all settle (they finish on the open pool; later ones are
// CLOSED), and when it resolves forkpoint holds no connection of a pool the app passed in.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { DatabaseError, openForkpoint } from "../../src/index.js";
import { freshPgDatabase, pgServer } from "../fixtures/postgres-database.js";

const url = await pgServer();

describe.skipIf(!url)("close() with calls under way", () => {
  it("settles every call made before it, even those waiting for one of the pool's connections", async () => {
    const fp = openForkpoint({ postgres: { connectionString: await freshPgDatabase(), max: 2 } });
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "hello" });
    const calls = Array.from({ length: 20 }, (_, i) =>
      (i % 4 === 0 ? s.append({ role: "user", content: `x${i}` }) : s.history()).then(
        () => "done",
        (e: { code?: string }) => e.code ?? "other",
      ),
    );
    await fp.close();
    const outcomes = await Promise.all(calls);
    expect(outcomes.filter((o) => o !== "done" && o !== "CLOSED")).toEqual([]);
    await expect(s.history()).rejects.toMatchObject({ code: "CLOSED" });
  });

  it("gives back every connection of the app's pool before it resolves (reads' trailing COMMITs included)", async () => {
    const pool = new pg.Pool({ connectionString: await freshPgDatabase(), max: 3, pipeline: true } as pg.PoolConfig);
    try {
      const fp = openForkpoint({ postgres: pool });
      const s = await fp.createSession({ userId: "u" });
      await s.append({ role: "user", content: "hello" });
      const reads = Array.from({ length: 12 }, () => s.history().catch(() => undefined));
      await new Promise((r) => setImmediate(r));
      await fp.close();
      expect(pool.totalCount - pool.idleCount).toBe(0);
      await Promise.all(reads);
      // The pool is the app's: still open.
      expect((await pool.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    } finally {
      await pool.end();
    }
  });

  it("an app's pool the app ended first: calls are DatabaseError CLOSED, not the driver's own error", async () => {
    const pool = new pg.Pool({ connectionString: await freshPgDatabase() });
    const fp = openForkpoint({ postgres: pool });
    try {
      const s = await fp.createSession({ userId: "u" });
      await pool.end();
      const error = await s.history().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DatabaseError);
      expect(error).toMatchObject({ code: "CLOSED", message: expect.stringContaining("ended") as unknown });
    } finally {
      await fp.close();
    }
  });
});
