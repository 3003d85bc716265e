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

/** Brings the schema up to date; refuses a database that a newer forkpoint has migrated further. */
export function applyMigrations(db: Database.Database, migrationsFolder: string): void {
  const migrations = readMigrationFiles({ migrationsFolder });
  const latestKnown = migrations.reduce((max, m) => Math.max(max, m.folderMillis), 0);
  db.exec("BEGIN IMMEDIATE");
  try {
    // The same table drizzle's own migrator keeps, so drizzle-kit tooling reads our history.
    db.exec(`CREATE TABLE IF NOT EXISTS ${TABLE} (id INTEGER PRIMARY KEY, hash text NOT NULL, created_at numeric)`);
    const lastApplied = checkNotNewer(db, latestKnown);
    const record = db.prepare(`INSERT INTO ${TABLE} (hash, created_at) VALUES (?, ?)`);
    for (const migration of migrations) {
      if (migration.folderMillis <= lastApplied) continue;
      for (const statement of migration.sql) if (statement.trim()) db.exec(statement);
      record.run(migration.hash, migration.folderMillis);
    }
    db.exec("COMMIT");
  } catch (error) {
    if (db.inTransaction) db.exec("ROLLBACK");
    throw error;
  }
}
