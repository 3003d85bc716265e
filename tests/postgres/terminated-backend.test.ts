// A unit the server ends: its connection terminated while forkpoint holds it (a failover, pg_terminate_backend), or a
// statement past the app's statement_timeout. The unit fails with a typed error, the process lives on, the handle works.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { DatabaseError, openForkpoint } from "../../src/index.js";
import { freshPgDatabase, pgServer } from "../fixtures/postgres-database.js";

const url = await pgServer();

describe.skipIf(!url)("a backend terminated mid-unit", () => {
  it("fails the read with CANNOT_CONNECT, not the process; the next read works", async () => {
    const database = await freshPgDatabase();
    const fp = openForkpoint({ postgres: { connectionString: database, max: 2 } });
    const admin = new pg.Client({ connectionString: database });
    await admin.connect();
    try {
      const s = await fp.createSession({ userId: "u" });
      await s.append({ role: "user", content: "hello" });
      // The read waits on a lock, so its connection is checked out when the server ends it.
      await admin.query("BEGIN");
      await admin.query("LOCK TABLE entries IN ACCESS EXCLUSIVE MODE");
      const read = s.history();
      read.catch(() => undefined);
      let waiting: number[] = [];
      while (waiting.length === 0) {
        await new Promise((r) => setTimeout(r, 20));
        const { rows } = await admin.query<{ pid: number }>(
          `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
        );
        waiting = rows.map((r) => r.pid);
      }
      for (const pid of waiting) await admin.query("SELECT pg_terminate_backend($1)", [pid]);
      await admin.query("ROLLBACK");
      const error = await read.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(DatabaseError);
      expect(error).toMatchObject({ code: "CANNOT_CONNECT" });
      expect((await s.history()).map((m) => m.content)).toEqual(["hello"]);
      await s.append({ role: "assistant", content: "still here" });
      expect(await fp.verify()).toMatchObject({ ok: true });
    } finally {
      await admin.end();
      await fp.close();
    }
  });

  it("a connection the server ends right as the pool hands it out is heard: the process lives on (review 22)", async () => {
    const database = await freshPgDatabase();
    const pool = new pg.Pool({ connectionString: database, max: 2 });
    const fp = openForkpoint({ postgres: pool });
    const admin = new pg.Client({ connectionString: database });
    await admin.connect();
    try {
      const s = await fp.createSession({ userId: "u" });
      // Handed out, with nothing of its user listening yet: the server's end arrives before any unit could listen.
      const client = await pool.connect();
      const ended = new Promise((resolve) => client.once("end", resolve));
      const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
      await admin.query("SELECT pg_terminate_backend($1)", [rows[0]!.pid]);
      await ended;
      client.release(new Error("ended"));
      await s.append({ role: "user", content: "still here" });
      expect((await s.history()).map((m) => m.content)).toEqual(["still here"]);
    } finally {
      await admin.end();
      await fp.close();
      await pool.end();
    }
    // Closed, forkpoint no longer listens on the app's pool.
    expect(pool.listenerCount("acquire")).toBe(0);
  });

  it("a statement ended by the app's statement_timeout is TIMEOUT, not lock contention", async () => {
    const database = await freshPgDatabase();
    const fp = openForkpoint({ postgres: { connectionString: database, statement_timeout: 200 } });
    const admin = new pg.Client({ connectionString: database });
    await admin.connect();
    try {
      const s = await fp.createSession({ userId: "u" });
      await admin.query("BEGIN");
      await admin.query("LOCK TABLE entries IN ACCESS EXCLUSIVE MODE");
      await expect(s.history()).rejects.toMatchObject({ name: "DatabaseError", code: "TIMEOUT" });
      await admin.query("ROLLBACK");
      expect(await s.history()).toEqual([]);
    } finally {
      await admin.end();
      await fp.close();
    }
  });

  it("a call that waits past connectionTimeoutMillis for one of the pool's connections, all in use, is BUSY: the server is up", async () => {
    const database = await freshPgDatabase();
    // Long enough for a new connection on a loaded machine; a call waiting on the held one still runs out.
    const pool = new pg.Pool({ connectionString: database, max: 1, connectionTimeoutMillis: 2_000 });
    const fp = openForkpoint({ postgres: pool });
    try {
      const s = await fp.createSession({ userId: "u" });
      // The app's own work holds the pool's only connection.
      const held = await pool.connect();
      try {
        await expect(s.history()).rejects.toMatchObject({ name: "DatabaseError", code: "BUSY" });
      } finally {
        held.release();
      }
      expect(await s.history()).toEqual([]);
    } finally {
      await fp.close();
      await pool.end();
    }
  });
});
