// The PostgreSQL schema is migrated on open, once however many servers open the database at the same moment, and its
// history is forkpoint's own: an app that migrates the same database with drizzle keeps drizzle's table to itself.
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { drizzle } from "drizzle-orm/node-postgres";
import { migrate } from "drizzle-orm/node-postgres/migrator";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { PG_FOLDER } from "../../../scripts/generate-migrations.js";
import { DatabaseError, openForkpoint, type ForkpointLogger } from "../../../src/index.js";
import { MIGRATIONS } from "../../../src/store/postgres/migrations.generated.js";
import { MIGRATE_KEY } from "../../../src/store/postgres/locks.js";
import { PostgresStore } from "../../../src/store/postgres/store.js";
import { MIGRATIONS_TABLE, TABLES } from "../../../src/store/postgres/tables.js";
import { freshPgDatabase, pgServer } from "../../fixtures/postgres-database.js";
import { freePort } from "../../fixtures/postgres-server.js";

const server = await pgServer();
/** drizzle's default history table: the app's, when the app migrates with drizzle. */
const DRIZZLE_TABLE = "drizzle.__drizzle_migrations";
const DAY = 86_400_000;
/** Opening a database that cannot be used yet is logged: these tests expect it. */
const quiet: ForkpointLogger = { warn: () => undefined, error: () => undefined };

interface HistoryRow {
  id: number;
  hash: string;
  created_at: string;
}

async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A history table's rows in order, or null when it does not exist. */
const rowsOf = (url: string, table: string) =>
  withClient(url, async (client) => {
    if (!(await client.query(`SELECT to_regclass($1) AS t`, [table])).rows[0].t) return null;
    return (await client.query<HistoryRow>(`SELECT id, hash, created_at FROM ${table} ORDER BY id`)).rows;
  });

const history = async (url: string) => (await rowsOf(url, MIGRATIONS_TABLE)) ?? [];

const tableExists = (url: string, table: string) =>
  withClient(url, async (client) => (await client.query(`SELECT to_regclass($1)::text AS t`, [table])).rows[0].t !== null);

/** Waits until a backend of the database at `url` matches `where` (a condition on pg_stat_activity). */
async function waitUntil(url: string, where: string): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  for (let i = 0; ; i++) {
    const found = await withClient(url, (c) => c.query(`SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND ${where}`, [name]));
    if (found.rowCount! > 0) return;
    if (i > 500) throw new Error(`no backend of ${name} came to ${where}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const folders: string[] = [];
afterEach(() => {
  for (const dir of folders.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

/** An app's drizzle migrations folder, as drizzle-kit writes one: each migration with its journal time. */
function appFolder(migrations: { tag: string; when: number; sql: string }[]): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "forkpoint-app-migrations-"));
  folders.push(dir);
  fs.mkdirSync(path.join(dir, "meta"));
  const entries = migrations.map(({ tag, when }, idx) => ({ idx, version: "7", when, tag, breakpoints: true }));
  fs.writeFileSync(path.join(dir, "meta", "_journal.json"), JSON.stringify({ version: "7", dialect: "postgresql", entries }));
  for (const m of migrations) fs.writeFileSync(path.join(dir, `${m.tag}.sql`), m.sql);
  return dir;
}

const USERS = { tag: "0000_app_users", sql: "CREATE TABLE app_users (id serial PRIMARY KEY, email text NOT NULL);" };
const ORDERS = { tag: "0001_app_orders", sql: "CREATE TABLE app_orders (id serial PRIMARY KEY, total integer NOT NULL);" };
const FIRST = MIGRATIONS[0]!.folderMillis;
const LATEST = MIGRATIONS.at(-1)!.folderMillis;

/** What an app does to migrate its own schema: drizzle's migrator with its defaults. */
async function appMigrate(url: string, folder: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: url });
  try {
    await migrate(drizzle(pool), { migrationsFolder: folder });
  } finally {
    await pool.end();
  }
}

/**
 * forkpoint's first `count` migrations recorded as earlier versions of forkpoint recorded them, in drizzle's default
 * table: what drizzle's own migrator writes for drizzle/postgres.
 */
async function migrateAsEarlierVersion(url: string, count = MIGRATIONS.length): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "forkpoint-earlier-"));
  folders.push(dir);
  fs.cpSync(PG_FOLDER, dir, { recursive: true });
  const journalFile = path.join(dir, "meta", "_journal.json");
  const journal = JSON.parse(fs.readFileSync(journalFile, "utf8")) as { entries: unknown[] };
  fs.writeFileSync(journalFile, JSON.stringify({ ...journal, entries: journal.entries.slice(0, count) }));
  await appMigrate(url, dir);
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

  it("refuses a database a newer forkpoint migrated, and the logger hears that opening failed (not recovery)", async () => {
    const url = await freshPgDatabase();
    await (await PostgresStore.open(url)).close();
    await withClient(url, (client) =>
      client.query(`INSERT INTO ${MIGRATIONS_TABLE} (hash, created_at) VALUES ('future', $1)`, [LATEST + DAY]),
    );
    await expect(PostgresStore.open(url)).rejects.toMatchObject({ code: "SCHEMA_TOO_NEW" });
    const store = new PostgresStore(url);
    await expect(store.query((tx) => tx.allSessionIds())).rejects.toMatchObject({ code: "SCHEMA_TOO_NEW" });
    await store.close();

    const lines: string[] = [];
    const logger: ForkpointLogger = {
      warn: (m) => lines.push(m),
      error: (m, detail) => lines.push(`${m} [${(detail as { code?: string }).code}]`),
    };
    const fp = openForkpoint({ postgres: url, logger });
    await expect(fp.listSessions({ userId: "alice" })).rejects.toMatchObject({ code: "SCHEMA_TOO_NEW" });
    await fp.close();
    expect(lines).toEqual(["forkpoint: opening the database failed, so interrupted moves were not looked for [SCHEMA_TOO_NEW]"]);
  });

  it("an app that migrated with drizzle first: forkpoint opens beside it, and drizzle's table stays the app's", async () => {
    const url = await freshPgDatabase();
    // The app's migration is dated after every one of forkpoint's: drizzle's table is ahead of forkpoint's schema.
    await appMigrate(url, appFolder([{ ...USERS, when: LATEST + DAY }]));
    const appRows = await rowsOf(url, DRIZZLE_TABLE);
    expect(appRows).toHaveLength(1);

    const fp = openForkpoint({ postgres: url });
    const s = await fp.createSession({ userId: "alice" });
    await s.append({ role: "user", content: "hi" });
    await fp.close();
    expect((await history(url)).map((r) => r.hash)).toEqual(MIGRATIONS.map((m) => m.hash));
    expect(await rowsOf(url, DRIZZLE_TABLE)).toEqual(appRows);

    // The app adds a migration later: it applies, and forkpoint still opens.
    await appMigrate(
      url,
      appFolder([
        { ...USERS, when: LATEST + DAY },
        { ...ORDERS, when: LATEST + 2 * DAY },
      ]),
    );
    expect(await tableExists(url, "app_orders")).toBe(true);
    const again = openForkpoint({ postgres: url });
    expect(await (await again.getSession(s.id, { userId: "alice" })).history()).toHaveLength(1);
    await again.close();
    expect(await history(url)).toHaveLength(MIGRATIONS.length);
  });

  it("an app's drizzle migrator making drizzle's schema while forkpoint opens: forkpoint opens all the same", async () => {
    const url = await freshPgDatabase();
    await withClient(url, async (app) => {
      // What drizzle's migrator does first, caught before it commits: forkpoint's own creation of the schema waits on it.
      await app.query("BEGIN");
      await app.query(`CREATE SCHEMA IF NOT EXISTS "drizzle"`);
      const lines: string[] = [];
      const fp = openForkpoint({ postgres: url, logger: { warn: (m) => lines.push(m), error: (m) => lines.push(m) } });
      try {
        const opened = fp.listSessions({ userId: "alice" });
        opened.catch(() => undefined);
        await waitUntil(url, `wait_event_type = 'Lock' AND query LIKE 'CREATE SCHEMA%'`);
        await app.query("COMMIT");
        expect((await opened).items).toEqual([]);
        // The first attempt opened it: nothing failed at open.
        expect(lines).toEqual([]);
      } finally {
        await fp.close();
      }
    });
    expect(await history(url)).toHaveLength(MIGRATIONS.length);
  });

  it("a role without CREATE on the database opens one whose drizzle schema a DBA made for it", async () => {
    const url = await freshPgDatabase();
    const name = new URL(url).pathname.slice(1);
    const role = `r_${name}`;
    await withClient(url, async (dba) => {
      await dba.query(`CREATE ROLE ${role} LOGIN`);
      await dba.query(`REVOKE CREATE ON DATABASE ${name} FROM PUBLIC`);
      await dba.query(`CREATE SCHEMA drizzle AUTHORIZATION ${role}`);
      await dba.query(`GRANT CREATE, USAGE ON SCHEMA public TO ${role}`);
    });
    const asRole = new URL(url);
    asRole.username = role;
    const fp = openForkpoint({ postgres: asRole.href });
    try {
      const s = await fp.createSession({ userId: "alice" });
      expect((await fp.listSessions({ userId: "alice" })).items.map((i) => i.id)).toEqual([s.id]);
    } finally {
      await fp.close();
    }
    expect(await history(url)).toHaveLength(MIGRATIONS.length);
  });

  it("a server waits out another's migration whatever the pool's statement_timeout and lock_timeout", async () => {
    const url = await freshPgDatabase();
    await withClient(url, async (other) => {
      // Another server migrating: it holds the migration lock longer than this pool lets a statement run.
      await other.query(`SELECT pg_advisory_lock(${MIGRATE_KEY})`);
      // One connection: the one that migrated is the one asked afterwards.
      const pool = new pg.Pool({ connectionString: url, statement_timeout: 100, lock_timeout: 100, max: 1 });
      const fp = openForkpoint({ postgres: pool, logger: quiet });
      try {
        const opened = fp.listSessions({ userId: "alice" });
        opened.catch(() => undefined);
        await waitUntil(url, `wait_event_type = 'Lock' AND query LIKE '%advisory%'`);
        await new Promise((resolve) => setTimeout(resolve, 300));
        await other.query(`SELECT pg_advisory_unlock(${MIGRATE_KEY})`);
        expect((await opened).items).toEqual([]);
        // The pool's timeouts still bound the app's statements afterwards.
        const shown = await pool.query<{ s: string; l: string }>(
          `SELECT current_setting('statement_timeout') AS s, current_setting('lock_timeout') AS l`,
        );
        expect(shown.rows[0]).toEqual({ s: "100ms", l: "100ms" });
      } finally {
        await fp.close();
        await pool.end();
      }
    });
    expect(await history(url)).toHaveLength(MIGRATIONS.length);
  });

  it("an app's table named as one of forkpoint's (in the same schema) is a DatabaseError naming it, the app's table untouched", async () => {
    const url = await freshPgDatabase();
    await withClient(url, (client) => client.query(`CREATE TABLE sessions (sid text PRIMARY KEY, sess json NOT NULL)`));
    const fp = openForkpoint({ postgres: url, logger: quiet });
    try {
      const error = await fp.listSessions({ userId: "alice" }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DatabaseError);
      expect(error).toMatchObject({ code: "CANNOT_OPEN", message: expect.stringContaining(`"sessions"`) as unknown });
      expect((error as Error).message).toContain("search_path");
    } finally {
      await fp.close();
    }
    await withClient(url, async (client) => {
      const tables = await client.query<{ t: string }>(`SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public'`);
      expect(tables.rows).toEqual([{ t: "sessions" }]);
    });
    // Nothing of the migration stayed.
    expect(await rowsOf(url, MIGRATIONS_TABLE)).toBeNull();
  });

  it("keeps to its pool's search_path: in a schema of its own, beside an app's own `sessions` table", async () => {
    const url = await freshPgDatabase();
    await withClient(url, async (client) => {
      await client.query(`CREATE TABLE sessions (sid text PRIMARY KEY, sess json NOT NULL)`);
      await client.query(`INSERT INTO sessions VALUES ('app', '{}')`);
      await client.query(`CREATE SCHEMA fp`);
    });
    const fp = openForkpoint({ postgres: { connectionString: url, options: "-c search_path=fp" } });
    try {
      const s = await fp.createSession({ userId: "alice" });
      const cp = await s.checkpoint({ name: "empty" });
      await s.append({ role: "user", content: "hi" });
      await s.rollback(cp.id);
      expect(await s.history()).toEqual([]);
      expect((await fp.verify()).ok).toBe(true);
    } finally {
      await fp.close();
    }
    await withClient(url, async (client) => {
      const where = await client.query<{ s: string }>(
        `SELECT table_schema AS s FROM information_schema.tables WHERE table_name = 'entries'`,
      );
      expect(where.rows).toEqual([{ s: "fp" }]);
      expect((await client.query(`SELECT * FROM public.sessions`)).rows).toEqual([{ sid: "app", sess: {} }]);
    });
    expect(await history(url)).toHaveLength(MIGRATIONS.length);

    // A second forkpoint schema in the same database: the history is the database's, so it is refused, not half-made.
    await withClient(url, (client) => client.query(`CREATE SCHEMA fp2`));
    const second = openForkpoint({ postgres: { connectionString: url, options: "-c search_path=fp2" }, logger: quiet });
    try {
      await expect(second.listSessions({ userId: "alice" })).rejects.toMatchObject({
        name: "DatabaseError",
        code: "CANNOT_OPEN",
        message: expect.stringContaining("search_path") as unknown,
      });
    } finally {
      await second.close();
    }
    await withClient(url, async (client) => {
      expect((await client.query(`SELECT 1 FROM pg_tables WHERE schemaname = 'fp2'`)).rows).toEqual([]);
    });
  });

  it("forkpoint first, then an app migration dated before forkpoint's: drizzle applies it", async () => {
    const url = await freshPgDatabase();
    await (await PostgresStore.open(url)).close();
    await appMigrate(url, appFolder([{ ...USERS, when: FIRST - DAY }]));
    expect(await tableExists(url, "app_users")).toBe(true);
    expect((await rowsOf(url, DRIZZLE_TABLE))!.map((r) => Number(r.created_at))).toEqual([FIRST - DAY]);
    await (await PostgresStore.open(url)).close();
    expect(await history(url)).toHaveLength(MIGRATIONS.length);
  });

  it("a database an earlier version migrated (its rows in drizzle's table) upgrades: rows moved once, none applied twice", async () => {
    const url = await freshPgDatabase();
    await appMigrate(url, appFolder([{ ...USERS, when: FIRST - DAY }]));
    const appRows = await rowsOf(url, DRIZZLE_TABLE);
    // That version knew every migration but the last: this one moves their rows and applies the last.
    await migrateAsEarlierVersion(url, MIGRATIONS.length - 1);
    expect(await rowsOf(url, DRIZZLE_TABLE)).toHaveLength(MIGRATIONS.length);
    expect(await rowsOf(url, MIGRATIONS_TABLE)).toBeNull();

    // Several servers opening it at once: one moves the rows, the others find the work done.
    const stores = Array.from({ length: 4 }, () => new PostgresStore(url));
    try {
      await Promise.all(stores.map((s) => s.ready()));
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
    expect((await history(url)).map((r) => [r.hash, Number(r.created_at)])).toEqual(MIGRATIONS.map((m) => [m.hash, m.folderMillis]));
    expect(await rowsOf(url, DRIZZLE_TABLE)).toEqual(appRows);

    // The app's drizzle migrator now sees only its own history: a newer app migration applies.
    await appMigrate(
      url,
      appFolder([
        { ...USERS, when: FIRST - DAY },
        { ...ORDERS, when: FIRST - DAY / 2 },
      ]),
    );
    expect(await tableExists(url, "app_orders")).toBe(true);
  });

  it("an earlier version's database keeps its sessions through the upgrade", async () => {
    const url = await freshPgDatabase();
    const fp = openForkpoint({ postgres: url });
    const s = await fp.createSession({ userId: "alice" });
    await s.append([
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" },
    ]);
    const cp = await s.checkpoint({ name: "kept" });
    const before = JSON.stringify(await fp.exportSession(s.id, { userId: "alice" }));
    await fp.close();
    // Back to the earlier layout: forkpoint's history in drizzle's table, beside an app's row.
    await appMigrate(url, appFolder([{ ...USERS, when: LATEST + DAY }]));
    await withClient(url, async (client) => {
      await client.query(`INSERT INTO ${DRIZZLE_TABLE} (hash, created_at) SELECT hash, created_at FROM ${MIGRATIONS_TABLE} ORDER BY id`);
      await client.query(`DROP TABLE ${MIGRATIONS_TABLE}`);
    });
    const appRows = (await rowsOf(url, DRIZZLE_TABLE))!.slice(0, 1);

    const upgraded = openForkpoint({ postgres: url });
    expect(JSON.stringify(await upgraded.exportSession(s.id, { userId: "alice" }))).toBe(before);
    expect((await (await upgraded.getSession(s.id, { userId: "alice" })).restore(cp.id)).checkpoint.id).toBe(cp.id);
    expect(await upgraded.verify()).toMatchObject({ ok: true });
    await upgraded.close();
    expect((await history(url)).map((r) => r.hash)).toEqual(MIGRATIONS.map((m) => m.hash));
    expect(await rowsOf(url, DRIZZLE_TABLE)).toEqual(appRows);
  });

  it("a read-only handle on a database an earlier version migrated is SCHEMA_TOO_OLD, and migrates nothing", async () => {
    const url = await freshPgDatabase();
    await migrateAsEarlierVersion(url, MIGRATIONS.length - 1);
    const before = await rowsOf(url, DRIZZLE_TABLE);
    const reader = openForkpoint({ postgres: url, readonly: true });
    await expect(reader.listSessions({ userId: "alice" })).rejects.toMatchObject({ name: "DatabaseError", code: "SCHEMA_TOO_OLD" });
    await reader.close();
    expect(await rowsOf(url, DRIZZLE_TABLE)).toEqual(before);
    expect(await rowsOf(url, MIGRATIONS_TABLE)).toBeNull();
    // Opened writable once, it is migrated, and read-only handles read it.
    const writer = openForkpoint({ postgres: url });
    await writer.listSessions({ userId: "alice" });
    await writer.close();
    const again = openForkpoint({ postgres: url, readonly: true });
    expect((await again.listSessions({ userId: "alice" })).items).toEqual([]);
    await again.close();
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

  it("a server unreachable when the handle opened: calls fail with CANNOT_CONNECT until it can be reached, then work", async () => {
    const url = new URL(await freshPgDatabase());
    // A port nothing listens on yet; later, a relay on it to the real server (as a database that comes up after the app).
    const port = await freePort();
    const fp = openForkpoint({ postgres: `postgres://${url.username}@127.0.0.1:${port}${url.pathname}`, logger: quiet });
    await expect(fp.listSessions({ userId: "alice" })).rejects.toMatchObject({ name: "DatabaseError", code: "CANNOT_CONNECT" });
    const relay = net.createServer((socket) => {
      const upstream = net.connect(Number(url.port), url.hostname);
      socket.pipe(upstream).pipe(socket);
      socket.on("error", () => upstream.destroy());
      upstream.on("error", () => socket.destroy());
    });
    await new Promise<void>((resolve) => relay.listen(port, "127.0.0.1", resolve));
    try {
      const s = await fp.createSession({ userId: "alice" });
      await s.append({ role: "user", content: "hi" });
      expect((await fp.listSessions({ userId: "alice" })).items.map((i) => i.id)).toEqual([s.id]);
    } finally {
      await fp.close();
      relay.close();
    }
    expect(await history(url.href)).toHaveLength(MIGRATIONS.length);
  });

  it("reports a connection refused TLS (a server without it, asked for it) as a DatabaseError", async () => {
    const url = new URL(await freshPgDatabase());
    const fp = openForkpoint({ postgres: { connectionString: url.href, ssl: { rejectUnauthorized: true } }, logger: quiet });
    try {
      const error = await fp.listSessions({ userId: "alice" }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DatabaseError);
      expect(error).toMatchObject({ code: "CANNOT_OPEN", message: expect.stringContaining("SSL") as unknown });
    } finally {
      await fp.close();
    }
  });

  it("reports a password the server asks for, missing or wrong, as CANNOT_OPEN", async () => {
    const db = await freshPgDatabase();
    const role = `pw_${Math.random().toString(36).slice(2, 10)}`;
    await withClient(server!, async (admin) => {
      await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'secret'`);
      // This role alone signs in by password: the line goes ahead of the server's trust lines.
      const hba = (await admin.query<{ hba_file: string }>("SHOW hba_file")).rows[0]!.hba_file;
      fs.writeFileSync(hba, `host all ${role} 127.0.0.1/32 scram-sha-256\n${fs.readFileSync(hba, "utf8")}`);
      await admin.query("SELECT pg_reload_conf()");
    });
    const as = (password: string) => Object.assign(new URL(db), { username: role, password }).toString();
    // The reload is asynchronous: until it is in force, the role still signs in by trust.
    for (let i = 0; ; i++) {
      const probe = new pg.Client({ connectionString: as("wrong") });
      const refused = await probe.connect().then(
        () => false,
        () => true,
      );
      await probe.end().catch(() => undefined);
      if (refused) break;
      if (i > 200) throw new Error("the server never asked for a password");
      await new Promise((r) => setTimeout(r, 10));
    }
    for (const password of ["", "wrong"]) {
      const fp = openForkpoint({ postgres: as(password) });
      await expect(fp.listSessions({ userId: "u" })).rejects.toMatchObject({ name: "DatabaseError", code: "CANNOT_OPEN" });
      await fp.close();
    }
    // The right one signs in: a read-only handle finds the database empty.
    const fp = openForkpoint({ postgres: as("secret"), readonly: true });
    await expect(fp.listSessions({ userId: "u" })).rejects.toMatchObject({ name: "DatabaseError", code: "NOT_A_DATABASE" });
    await fp.close();
  });

  it("reports an unreachable server as a DatabaseError", async () => {
    const store = new PostgresStore({ connectionString: "postgres://nobody@127.0.0.1:1/none", connectionTimeoutMillis: 2000 });
    await expect(store.ready()).rejects.toMatchObject({ name: "DatabaseError", code: "CANNOT_CONNECT" });
    await store.close();
  });
});
