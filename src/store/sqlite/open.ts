// Opens the SQLite file: WAL, foreign keys, a busy timeout, then the migrations.
import Database from "better-sqlite3";
import { existsSync } from "node:fs";
import { DatabaseError, schemaTooOld } from "../../models/errors.js";
import { applyMigrations, assertNotNewer, latestOf } from "./migrate.js";
import { MIGRATIONS } from "./migrations.generated.js";

/** How each commit reaches the disk: "normal" (WAL + synchronous=NORMAL, the default) or "full" (an fsync per commit). */
export type Durability = "normal" | "full";

export interface OpenDatabaseOptions {
  path: string;
  durability: Durability;
  /** How long a writer waits for another process's lock before failing, in ms. */
  busyTimeoutMs: number;
  readonly: boolean;
  /** Fold the WAL into the file on a worker thread instead of in the committing call (see `WalCheckpointer`). */
  walWorker?: boolean;
  /** Told what a server wants in its logs but no call can throw (a WAL worker that stopped). */
  onWarning?: (message: string, cause: unknown) => void;
}

export function openDatabase(options: OpenDatabaseOptions): Database.Database {
  let db: Database.Database;
  try {
    if (options.readonly && options.path !== ":memory:" && !existsSync(options.path)) {
      throw new Error(`no database at ${options.path}`);
    }
    db = new Database(options.path, { timeout: options.busyTimeoutMs, readonly: options.readonly });
  } catch (cause) {
    throw new DatabaseError("CANNOT_OPEN", `cannot open database ${options.path}: ${(cause as Error).message}`, { cause });
  }
  try {
    // Reading the schema is the first thing that touches the file: a non-SQLite file fails here.
    db.prepare("SELECT count(*) FROM sqlite_master").get();
    if (!options.readonly) {
      if (options.path !== ":memory:") db.pragma("journal_mode = WAL");
      db.pragma(`synchronous = ${options.durability === "full" ? "FULL" : "NORMAL"}`);
    }
    db.pragma("foreign_keys = ON");
    if (options.readonly) assertMigrated(db);
    else applyMigrations(db);
    return db;
  } catch (cause) {
    db.close();
    if (cause instanceof DatabaseError) throw cause;
    const code = (cause as { code?: unknown }).code;
    if (typeof code === "string" && code.startsWith("SQLITE_BUSY")) {
      throw new DatabaseError("BUSY", `cannot open ${options.path}: another process kept it locked past the busy timeout`, { cause });
    }
    throw new DatabaseError("NOT_A_DATABASE", `cannot use ${options.path} as a forkpoint database: ${(cause as Error).message}`, { cause });
  }
}

/** Read-only opens cannot migrate: the schema must be exactly this version's. */
function assertMigrated(db: Database.Database): void {
  const row = db.prepare("SELECT name FROM sqlite_master WHERE type='table' AND name='entries'").get();
  if (!row) throw new DatabaseError("NOT_A_DATABASE", "the database has no forkpoint schema and is opened read-only");
  if (assertNotNewer(db) < latestOf(MIGRATIONS)) throw schemaTooOld();
}
