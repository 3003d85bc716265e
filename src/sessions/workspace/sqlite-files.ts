// SQLite databases in a workspace (an app's own, another forkpoint's): a database's -wal, -shm and -journal files are
// its state while a program has it open, never captured apart from it (written back on their own, over or beside
// another state of the database, they corrupt it), and a database with a -wal or -journal file beside it is in use:
// a restore never writes or deletes it under the program that has it open.
import { closeSync, lstatSync, openSync, readSync } from "node:fs";
import { basename } from "node:path";

const SIDE = /-(wal|shm|journal)$/;
const HEADER = Buffer.from("SQLite format 3\0", "latin1");

/** Whether a regular file is at `full` (a name too long for a suffix, or unreadable: none). */
function isFile(full: string): boolean {
  try {
    return lstatSync(full, { throwIfNoEntry: false })?.isFile() ?? false;
  } catch {
    return false;
  }
}

/** Whether the file at `full` is an SQLite database (its first 16 bytes are SQLite's header). */
function isDatabase(full: string): boolean {
  let fd: number;
  try {
    if (!lstatSync(full, { throwIfNoEntry: false })?.isFile()) return false;
    fd = openSync(full, "r");
  } catch {
    return false;
  }
  try {
    const head = Buffer.alloc(HEADER.length);
    return readSync(fd, head, 0, head.length, 0) === head.length && head.equals(HEADER);
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

/** Why the file at `full` is not captured when it is an SQLite database's -wal, -shm or -journal file; else null. */
export function sqliteSideReason(full: string): string | null {
  const side = SIDE.exec(full);
  if (!side) return null;
  const db = full.slice(0, -side[0].length);
  if (!isDatabase(db)) return null;
  // Written back on its own, over or beside another state of the database, it would corrupt it.
  return `is the ${side[0]} file of the SQLite database ${basename(db)} beside it, never captured apart from it`;
}

/**
 * Why a restore may not write or delete the file at `full` (at `rel`): it is an SQLite database a program has open (its
 * -wal or -journal file is beside it), or such a database's -wal, -shm or -journal file; else null.
 */
export function sqliteInUse(full: string, rel: string): string | null {
  if (sqliteSideReason(full)) return `${rel} belongs to the SQLite database beside it, which forkpoint never writes apart from it`;
  // Asked of every file a restore writes: the names beside it first, its header only when one is there.
  const side = ["-wal", "-journal"].find((s) => isFile(full + s));
  if (!side || !isDatabase(full)) return null;
  return (
    `${rel} is an SQLite database in use (${basename(full)}${side} is beside it): writing it under a program that has ` +
    "it open would corrupt it; close that program, or, if none has it open, read it once read-write (sqlite3 " +
    `${basename(full)} 'SELECT count(*) FROM sqlite_master'), which folds ${basename(full)}${side} into it and removes it, then move`
  );
}
