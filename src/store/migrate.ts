// Applies drizzle-kit's migrations under an exclusive write lock, so processes opening one file at once cannot race.
import type Database from "better-sqlite3";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { DatabaseError } from "../models/errors.js";

const TABLE = "__drizzle_migrations";

function checkNotNewer(db: Database.Database, latestKnown: number): number {
  const last = db.prepare(`SELECT created_at AS at FROM ${TABLE} ORDER BY created_at DESC LIMIT 1`).get() as { at: number } | undefined;
  const lastApplied = last ? Number(last.at) : 0;
  if (lastApplied > latestKnown) {
    throw new DatabaseError(
      "SCHEMA_TOO_NEW",
      "this database was written by a newer version of forkpoint (its schema is ahead of this one); refusing to open it",
    );
  }
  return lastApplied;
}

/** Throws `SCHEMA_TOO_NEW` when a newer forkpoint has migrated the database past what this version knows. */
export function assertNotNewer(db: Database.Database, migrationsFolder: string): void {
  const latestKnown = readMigrationFiles({ migrationsFolder }).reduce((max, m) => Math.max(max, m.folderMillis), 0);
  checkNotNewer(db, latestKnown);
}

/**
 * Brings the schema up to date; refuses a database that a newer forkpoint has migrated further.
 * drizzle-kit rebuilds a changed SQLite table (create new, copy, drop old, rename), which SQLite only allows with
 * foreign keys off, and that pragma is ignored inside a transaction: so they are switched off around it, and
 * `foreign_key_check` must come back clean before the commit.
 */
export function applyMigrations(db: Database.Database, migrationsFolder: string): void {
  const migrations = readMigrationFiles({ migrationsFolder });
  const latestKnown = migrations.reduce((max, m) => Math.max(max, m.folderMillis), 0);
  const foreignKeys = db.pragma("foreign_keys", { simple: true }) === 1;
  db.pragma("foreign_keys = OFF");
  db.exec("BEGIN IMMEDIATE");
  try {
    // The same table drizzle's own migrator keeps, so drizzle-kit tooling reads our history.
    db.exec(`CREATE TABLE IF NOT EXISTS ${TABLE} (id INTEGER PRIMARY KEY, hash text NOT NULL, created_at numeric)`);
    const lastApplied = checkNotNewer(db, latestKnown);
    const record = db.prepare(`INSERT INTO ${TABLE} (hash, created_at) VALUES (?, ?)`);
    let applied = 0;
    for (const migration of migrations) {
      if (migration.folderMillis <= lastApplied) continue;
      for (const statement of migration.sql) if (statement.trim()) db.exec(statement);
      record.run(migration.hash, migration.folderMillis);
      applied++;
    }
    if (applied > 0) {
      const broken = db.pragma("foreign_key_check") as unknown[];
      if (broken.length > 0) throw new Error(`migrating left ${broken.length} rows whose foreign keys point nowhere`);
    }
    db.exec("COMMIT");
  } catch (error) {
    if (db.inTransaction) db.exec("ROLLBACK");
    throw error;
  } finally {
    if (foreignKeys) db.pragma("foreign_keys = ON");
  }
}
