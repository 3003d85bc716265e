// The -wal and -shm files SQLite keeps beside a database in WAL mode, and giving them back after a read-only use.
import Database from "better-sqlite3";
import { existsSync } from "node:fs";

/** Whether a -wal or -shm file is beside `path`: a connection has the database open (or one did not close). */
export function hasWalFiles(path: string): boolean {
  return existsSync(`${path}-wal`) || existsSync(`${path}-shm`);
}

/**
 * Removes the -wal and -shm files a read-only connection created and, being read-only, could not remove at its close.
 * A read-write connection opens and closes: SQLite removes them at that close only if it is the last connection (it
 * takes the exclusive lock first), so another process's open database is never disturbed; it writes no page of an
 * empty WAL. Best effort: when it cannot, the files stay until a writer's clean close.
 */
export function releaseWalFiles(path: string): void {
  try {
    const db = new Database(path, { fileMustExist: true, timeout: 0 });
    try {
      // The WAL is opened by the first read, and only an opened WAL is closed (and removed) with the connection.
      db.prepare("SELECT count(*) FROM sqlite_master").get();
    } finally {
      db.close();
    }
  } catch {
    // Left in place: harmless, and the next clean close of a writer removes them.
  }
}
