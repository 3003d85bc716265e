// Applies drizzle-kit's migrations under an exclusive write lock, so processes opening one file at once cannot race.
import type Database from "better-sqlite3";
import { DatabaseError } from "../../models/errors.js";
import { MIGRATIONS, type EmbeddedMigration } from "./migrations.generated.js";

const TABLE = "__drizzle_migrations";

/** The last migration applied (its folder time), or 0 for a database without forkpoint's history table. */
function lastApplied(db: Database.Database): number {
  const table = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`).get(TABLE);
  if (!table) return 0;
  const last = db.prepare(`SELECT created_at AS at FROM ${TABLE} ORDER BY created_at DESC LIMIT 1`).get() as { at: number } | undefined;
  return last ? Number(last.at) : 0;
}

/** Returns the last migration applied; throws `SCHEMA_TOO_NEW` when it is one this version does not know. */
function checkNotNewer(db: Database.Database, latestKnown: number): number {
  const last = lastApplied(db);
  if (last > latestKnown) {
    throw new DatabaseError(
      "SCHEMA_TOO_NEW",
      "this database was written by a newer version of forkpoint (its schema is ahead of this one); refusing to open it",
    );
  }
  return last;
}

/** The last migration applied; throws `SCHEMA_TOO_NEW` when a newer forkpoint has migrated the database past what this version knows. */
export function assertNotNewer(db: Database.Database, migrations: readonly EmbeddedMigration[] = MIGRATIONS): number {
  return checkNotNewer(db, latestOf(migrations));
}

/** The time of the newest migration among `migrations`. */
export function latestOf(migrations: readonly EmbeddedMigration[]): number {
  return migrations.reduce((max, m) => Math.max(max, m.folderMillis), 0);
}

/**
 * Brings the schema up to date; refuses a database that a newer forkpoint has migrated further. The migrations are
 * drizzle/'s, embedded in the code (see migrations.generated.ts), so a bundled build needs no folder beside it.
 * An up-to-date database is only read (no write lock: opening never waits for another process's writes).
 * drizzle-kit rebuilds a changed SQLite table (create new, copy, drop old, rename), which SQLite only allows with
 * foreign keys off, and that pragma is ignored inside a transaction: so they are switched off around it, and
 * `foreign_key_check` must find no more broken links after the migrations than before them.
 */
export function applyMigrations(db: Database.Database, migrations: readonly EmbeddedMigration[] = MIGRATIONS): void {
  const latestKnown = latestOf(migrations);
  // Read first: a newer schema is refused, and an up-to-date one opened, without waiting for a write lock.
  if (checkNotNewer(db, latestKnown) === latestKnown && latestKnown > 0) return;
  const foreignKeys = db.pragma("foreign_keys", { simple: true }) === 1;
  db.pragma("foreign_keys = OFF");
  db.exec("BEGIN IMMEDIATE");
  try {
    // The same table drizzle's own migrator keeps, so drizzle-kit tooling reads our history.
    db.exec(`CREATE TABLE IF NOT EXISTS ${TABLE} (id INTEGER PRIMARY KEY, hash text NOT NULL, created_at numeric)`);
    const applied = checkNotNewer(db, latestKnown);
    const record = db.prepare(`INSERT INTO ${TABLE} (hash, created_at) VALUES (?, ?)`);
    const pending = migrations.filter((m) => m.folderMillis > applied);
    const brokenBefore = pending.length > 0 ? (db.pragma("foreign_key_check") as unknown[]).length : 0;
    for (const migration of pending) {
      for (const statement of migration.sql) if (statement.trim()) db.exec(statement);
      record.run(migration.hash, migration.folderMillis);
    }
    if (pending.length > 0) {
      const broken = (db.pragma("foreign_key_check") as unknown[]).length;
      if (broken > brokenBefore) throw new Error(`migrating left ${broken - brokenBefore} more rows whose foreign keys point nowhere`);
    }
    db.exec("COMMIT");
  } catch (error) {
    if (db.inTransaction) db.exec("ROLLBACK");
    throw error;
  } finally {
    if (foreignKeys) db.pragma("foreign_keys = ON");
  }
}
