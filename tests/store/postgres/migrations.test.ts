// The PostgreSQL schema is migrated on open, once however many servers open the database at the same moment.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { MIGRATIONS } from "../../../src/store/postgres/migrations.generated.js";
import { PostgresStore } from "../../../src/store/postgres/store.js";
import { TABLES } from "../../../src/store/postgres/tables.js";
import { freshPgDatabase, pgServer } from "../../fixtures/postgres-database.js";

const server = await pgServer();

async function history(url: string): Promise<{ hash: string; created_at: string }[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(`SELECT hash, created_at FROM drizzle.__drizzle_migrations ORDER BY id`)).rows;
  } finally {
    await client.end();
  }
}

describe.skipIf(!server)("postgres migrations", () => {
  it("creates every table on open and records each migration once", async () => {
    const url = await freshPgDatabase();
    const store = await PostgresStore.open(url);
    try {
      const { rows } = await store.pool.query<{ t: string }>(`SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public'`);
      expect(rows.map((r) => r.t).sort()).toEqual([...TABLES].sort());
    } finally {
      await store.close();
    }
    expect((await history(url)).map((r) => r.hash)).toEqual(MIGRATIONS.map((m) => m.hash));
    // A second open finds nothing to do.
    await (await PostgresStore.open(url)).close();
    expect(await history(url)).toHaveLength(MIGRATIONS.length);
  });

  it("several servers opening one new database at once migrate it once", async () => {
    const url = await freshPgDatabase();
    const stores = Array.from({ length: 6 }, () => new PostgresStore(url));
    try {
      await Promise.all(stores.map((s) => s.ready()));
      await Promise.all(stores.map((s) => s.query((tx) => tx.allSessionIds())));
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
    expect(await history(url)).toHaveLength(MIGRATIONS.length);
  });

  it("refuses a database a newer forkpoint migrated", async () => {
    const url = await freshPgDatabase();
    await (await PostgresStore.open(url)).close();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`INSERT INTO drizzle.__drizzle_migrations (hash, created_at) VALUES ('future', $1)`, [Date.now() + 10 ** 10]);
    await client.end();
    await expect(PostgresStore.open(url)).rejects.toMatchObject({ code: "SCHEMA_TOO_NEW" });
    const store = new PostgresStore(url);
    await expect(store.query((tx) => tx.allSessionIds())).rejects.toMatchObject({ code: "SCHEMA_TOO_NEW" });
    await store.close();
  });

  it("leaves a caller's pool open on close and ends its own", async () => {
    const url = await freshPgDatabase();
    const pool = new pg.Pool({ connectionString: url });
    const borrowed = await PostgresStore.open(pool);
    await borrowed.close();
    expect((await pool.query("SELECT 1 AS one")).rows[0]).toEqual({ one: 1 });
    await pool.end();

    const own = await PostgresStore.open({ connectionString: url });
    await own.close();
    expect(own.pool.ended).toBe(true);
    await expect(own.query((tx) => tx.allSessionIds())).rejects.toMatchObject({ code: "CLOSED" });
  });

  it("moves history rows marked undone to the move stack: the newest standing on top, the oldest undone redone first", async () => {
    const url = await freshPgDatabase();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const stack = MIGRATIONS.findIndex((m) => m.sql.some((s) => s.includes("move_top")));
      const run = async (from: number, to: number) => {
        for (const m of MIGRATIONS.slice(from, to)) for (const st of m.sql) if (st.trim()) await client.query(st);
      };
      await run(0, stack);
      await client.query(`INSERT INTO sessions (id, user_id, current_branch_id, created_at, updated_at) VALUES ('s', 'u', 'b2', 1, 1),
        ('t', 'u', 'x', 1, 1)`);
      for (const [from, to, undone] of [
        ["b0", "b1", null],
        ["b1", "b2", null],
        ["b2", "b3", 5],
        ["b3", "b4", 6],
      ])
        await client.query(
          `INSERT INTO move_history (session_id, kind, from_branch_id, from_position, to_branch_id, to_position, undone_at, created_at)
          VALUES ('s', 'switch', $1, 0, $2, 0, $3, 1)`,
          [from, to, undone],
        );
      await run(stack, stack + 1);
      const rows = await client.query(`SELECT id, move_top, move_redo FROM sessions ORDER BY id`);
      expect(rows.rows.map((r) => [r.id, r.move_top, r.move_redo === null ? null : JSON.parse(r.move_redo)])).toEqual([
        ["s", "m:2", ["m:4", "m:3"]],
        ["t", null, null],
      ]);
      const prev = await client.query(`SELECT seq, prev FROM move_history ORDER BY seq`);
      expect(prev.rows.map((r) => [Number(r.seq), r.prev])).toEqual([
        [1, null],
        [2, "m:1"],
        [3, "m:2"],
        [4, "m:3"],
      ]);
    } finally {
      await client.end();
    }
  });

  it("reports an unreachable server as a DatabaseError", async () => {
    const store = new PostgresStore({ connectionString: "postgres://nobody@127.0.0.1:1/none", connectionTimeoutMillis: 2000 });
    await expect(store.ready()).rejects.toMatchObject({ name: "DatabaseError", code: "CANNOT_CONNECT" });
    await store.close();
  });
});
