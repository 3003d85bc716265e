// Applies the embedded migrations under an advisory lock, so servers starting at once against one database never race.
import type { CustomTypesConfig, Pool, PoolClient } from "pg";
import { DatabaseError, schemaTooOld } from "../../models/errors.js";
import { MIGRATE_KEY } from "./locks.js";
import { MIGRATIONS, type EmbeddedMigration } from "./migrations.generated.js";
import { MIGRATIONS_SCHEMA, MIGRATIONS_TABLE } from "./tables.js";

const TABLE = MIGRATIONS_TABLE;
/**
 * drizzle's default history table, which the app's own drizzle migrator writes too. Earlier versions of forkpoint
 * kept their history there; forkpoint's rows in it are moved to its own table on open.
 */
const SHARED_TABLE = `${MIGRATIONS_SCHEMA}.__drizzle_migrations`;
/** float8 prints the shortest text that reads back exactly from 12 on (`extra_float_digits` 1): times round-trip. */
const MIN_SERVER_VERSION = 120000;

/**
 * Whether `schema.table` exists, read from the catalog by a query (its own snapshot): a server that waited for another's
 * migration sees the tables it made. `to_regclass` asks this backend's catalog cache, which a transaction that began
 * before that migration committed may not have refreshed yet.
 */
async function exists(client: PoolClient, types: CustomTypesConfig, table: string): Promise<boolean> {
  const [schema, name] = table.split(".");
  const { rows } = await client.query<{ e: boolean }>({
    text: `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relname = $2) AS e`,
    values: [schema, name],
    types,
  });
  return rows[0]?.e === true;
}

const latestOf = (migrations: readonly EmbeddedMigration[]) => migrations.reduce((max, m) => Math.max(max, m.folderMillis), 0);

/**
 * A migration statement as it applies to the schema the pool's `search_path` names (public unless the app says
 * otherwise): drizzle-kit writes foreign keys to `"public"."table"`, and every other name in forkpoint's migrations and
 * queries is unqualified. An app whose own tables are named as forkpoint's (`sessions`, say) gives forkpoint's pool
 * `options: "-c search_path=forkpoint"`, and forkpoint's tables are made there.
 */
const inSearchPath = (statement: string) => statement.replaceAll('REFERENCES "public".', "REFERENCES ");

/**
 * A migration's statement refused because a table (or an index, a constraint, a function) of that name is there and
 * is not forkpoint's: the app's own `sessions`, say. Named, with the way out; nothing of the migration stays.
 */
function clash(error: unknown): never {
  const code = (error as { code?: unknown }).code;
  if (code !== "42P07" && code !== "42710" && code !== "42723") throw error;
  throw new DatabaseError(
    "CANNOT_OPEN",
    `cannot make forkpoint's tables: ${(error as Error).message}, and it is not forkpoint's. Give forkpoint a schema of ` +
      `its own with its connection's search_path (options: "-c search_path=forkpoint"; see docs/postgres.md)`,
    { cause: error },
  );
}

/** The last migration applied (its folder time), or 0 for a database without the history table. */
async function lastApplied(client: PoolClient, types: CustomTypesConfig): Promise<number> {
  if (!(await exists(client, types, TABLE))) return 0;
  const last = await client.query<{ at: number | null }>({ text: `SELECT max(created_at) AS at FROM ${TABLE}`, types });
  return Number(last.rows[0]?.at ?? 0);
}

/**
 * Moves forkpoint's rows out of drizzle's default table, where earlier versions wrote them, into forkpoint's own: the
 * migrations they record stay applied, and the app's drizzle migrator no longer sees them. Rows of other migrations
 * are the app's and stay.
 */
async function adoptShared(client: PoolClient, types: CustomTypesConfig, migrations: readonly EmbeddedMigration[]): Promise<void> {
  if (!(await exists(client, types, SHARED_TABLE))) return;
  await client.query({
    text: `WITH ours AS (DELETE FROM ${SHARED_TABLE} WHERE hash = ANY($1::text[]) RETURNING id, hash, created_at)
      INSERT INTO ${TABLE} (hash, created_at) SELECT hash, created_at FROM ours ORDER BY id`,
    values: [migrations.map((m) => m.hash)],
    types,
  });
}

/** Returns the last migration applied; throws `SCHEMA_TOO_NEW` when it is one this version does not know. */
async function checkNotNewer(client: PoolClient, types: CustomTypesConfig, latestKnown: number): Promise<number> {
  const last = await lastApplied(client, types);
  if (last > latestKnown) {
    throw new DatabaseError(
      "SCHEMA_TOO_NEW",
      "this database was written by a newer version of forkpoint (its schema is ahead of this one); refusing to open it",
    );
  }
  return last;
}

/**
 * drizzle's schema, made in a statement of its own ahead of the migrating transaction: an app's drizzle migrator (or
 * another server) making it at the same moment waits on an uncommitted schema for a statement, not for a whole
 * migration, and a schema someone else made first (the race `IF NOT EXISTS` loses: 23505, or 42P06) is as good.
 */
async function createSchema(client: PoolClient, types: CustomTypesConfig): Promise<void> {
  const found = await client.query({ text: `SELECT 1 FROM pg_namespace WHERE nspname = $1`, values: [MIGRATIONS_SCHEMA], types });
  if (found.rowCount! > 0) return;
  try {
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${MIGRATIONS_SCHEMA}`);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== "23505" && code !== "42P06") throw error;
  }
}

/**
 * The history is the database's (drizzle's schema), the tables are where the connection's search_path says: a history
 * with no tables here means forkpoint's schema is another one (one database holds one).
 */
async function checkTablesHere(client: PoolClient, types: CustomTypesConfig): Promise<void> {
  const { rows } = await client.query<{ t: string | null; path: string }>({
    text: `SELECT to_regclass('entries')::text AS t, current_setting('search_path') AS path`,
    types,
  });
  if (rows[0]?.t) return;
  throw new DatabaseError(
    "CANNOT_OPEN",
    `forkpoint's migrations are recorded in ${TABLE}, but its tables are not in this connection's search_path ` +
      `(${rows[0]?.path ?? "?"}): a database holds one forkpoint schema (see docs/postgres.md)`,
  );
}

async function checkServer(client: PoolClient, types: CustomTypesConfig): Promise<void> {
  const { rows } = await client.query<{ v: string }>({ text: `SELECT current_setting('server_version_num') AS v`, types });
  if (Number(rows[0]?.v) < MIN_SERVER_VERSION) {
    throw new DatabaseError("UNSUPPORTED_SERVER", `forkpoint needs PostgreSQL 12 or later (this server is ${rows[0]?.v})`);
  }
}

/**
 * Brings the schema up to date; refuses a database that a newer forkpoint has migrated further. An up-to-date database
 * is only read. Otherwise one transaction (PostgreSQL's DDL is transactional) takes a transaction-scoped advisory lock
 * and migrates: a second server waits, then finds the work done. The lock goes with the transaction (a pooler in
 * transaction mode keeps it on one backend), and the transaction runs without the pool's `statement_timeout` and
 * `lock_timeout`, which bound the app's statements: a server waits out another's migration, and a long one is not cut
 * off halfway.
 */
export async function applyMigrations(
  pool: Pool,
  types: CustomTypesConfig,
  migrations: readonly EmbeddedMigration[] = MIGRATIONS,
): Promise<void> {
  const latestKnown = latestOf(migrations);
  const client = await pool.connect();
  let broken: unknown;
  try {
    await checkServer(client, types);
    const last = await checkNotNewer(client, types, latestKnown);
    if (last > 0) await checkTablesHere(client, types);
    if (last === latestKnown && latestKnown > 0) return;
    await createSchema(client, types);
    await client.query("BEGIN");
    try {
      await client.query("SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = 0");
      await client.query({ text: `SELECT pg_advisory_xact_lock(${MIGRATE_KEY})`, types });
      if (!(await exists(client, types, TABLE))) {
        // drizzle's own layout, so that drizzle-kit (its `migrations` setting) reads it.
        await client.query(`CREATE TABLE ${TABLE} (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at bigint)`);
        await adoptShared(client, types, migrations);
      }
      const applied = await checkNotNewer(client, types, latestKnown);
      for (const migration of migrations.filter((m) => m.folderMillis > applied)) {
        for (const statement of migration.sql) if (statement.trim()) await client.query(inSearchPath(statement)).catch(clash);
        await client.query(`INSERT INTO ${TABLE} (hash, created_at) VALUES ($1, $2)`, [migration.hash, migration.folderMillis]);
      }
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    }
  } catch (error) {
    broken = error;
    throw error;
  } finally {
    // A connection that failed is closed rather than pooled: it may still hold an open transaction.
    client.release(broken instanceof Error ? broken : undefined);
  }
}

/** Throws `SCHEMA_TOO_NEW` when a newer forkpoint has migrated the database past what this version knows. */
export async function assertNotNewer(pool: Pool, types: CustomTypesConfig, migrations: readonly EmbeddedMigration[] = MIGRATIONS) {
  const client = await pool.connect();
  try {
    await checkNotNewer(client, types, latestOf(migrations));
  } finally {
    client.release();
  }
}

/** A read-only open cannot migrate: the schema must be there (as SQLite's `NOT_A_DATABASE`) and exactly this version's. */
export async function assertMigrated(pool: Pool, types: CustomTypesConfig): Promise<void> {
  const client = await pool.connect();
  try {
    const { rows } = await client.query<{ t: string | null }>({ text: `SELECT to_regclass('entries')::text AS t`, types });
    if (!rows[0]?.t) throw new DatabaseError("NOT_A_DATABASE", "the database has no forkpoint schema and is opened read-only");
    const latest = latestOf(MIGRATIONS);
    if ((await checkNotNewer(client, types, latest)) < latest) throw schemaTooOld();
  } finally {
    client.release();
  }
}
