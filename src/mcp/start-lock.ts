// A lock file per workspace directory in the user's data directory: servers started at once on one directory find or
// create its session one after the other, so they all end up with the same one.
import { createHash, randomUUID } from "node:crypto";
import { closeSync, linkSync, mkdirSync, openSync, readFileSync, renameSync, statSync, unlinkSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/** What a lock file holds: who took it, so that a waiter can tell a lock its owner died holding. */
interface Owner {
  pid: number;
  host: string;
  token: string;
}

export interface LockOptions {
  /** How often a waiter looks again (default 50 ms). */
  pollMs?: number;
  /** A lock file that names no owner yet (its owner died writing it) is taken as abandoned after this long (default 10 s). */
  unnamedMs?: number;
  /** A lock taken on another host (a data directory shared over the network) is taken as abandoned after this long (default 10 min). */
  foreignMs?: number;
}

/** The lock file of `key` (a directory's real path) under `lockDir`: the same name for every server, whatever started it. */
export const lockPath = (lockDir: string, key: string): string =>
  join(lockDir, `${createHash("sha256").update(key).digest("hex").slice(0, 32)}.lock`);

function readOwner(path: string): Owner | null | undefined {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined; // released meanwhile
    throw error;
  }
  try {
    const o = JSON.parse(text) as Partial<Owner>;
    return typeof o.pid === "number" && typeof o.host === "string" && typeof o.token === "string" ? (o as Owner) : null;
  } catch {
    return null; // being written
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"; // someone else's process: alive
  }
}

const ageOf = (path: string): number => {
  try {
    return Date.now() - statSync(path).mtimeMs;
  } catch {
    return 0;
  }
};

/** Whether the lock at `path` (held by `owner`) was left by an owner that is gone. */
function abandoned(path: string, owner: Owner | null, o: Required<LockOptions>): boolean {
  if (owner === null) return ageOf(path) > o.unnamedMs;
  if (owner.host !== hostname()) return ageOf(path) > o.foreignMs;
  return owner.pid !== process.pid && !alive(owner.pid);
}

/**
 * Removes an abandoned lock, unless another waiter replaced it meanwhile: the file is first renamed aside (one waiter
 * wins that), then checked to be the one found abandoned; a live lock moved aside by mistake is linked back.
 */
function breakLock(path: string, seen: Owner | null): void {
  const aside = `${path}.${randomUUID()}`;
  try {
    renameSync(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  const moved = readOwner(aside);
  if (moved !== undefined && moved?.token !== seen?.token) {
    try {
      linkSync(aside, path); // never over a newer lock: link fails when the name exists
    } catch {
      // a newer lock took the name: the one moved aside cannot be put back
    }
  }
  try {
    unlinkSync(aside);
  } catch {
    // gone already
  }
}

/**
 * Runs `fn` while holding the lock of `key`, waiting for (or breaking an abandoned) lock another server holds. Where no
 * lock file can be written (a read-only data directory, as some sandboxes give), `fn` runs without one.
 */
export async function withStartLock<T>(lockDir: string, key: string, fn: () => Promise<T>, options: LockOptions = {}): Promise<T> {
  const o: Required<LockOptions> = { pollMs: 50, unnamedMs: 10_000, foreignMs: 600_000, ...options };
  try {
    mkdirSync(lockDir, { recursive: true });
  } catch {
    return fn();
  }
  const path = lockPath(lockDir, key);
  const me: Owner = { pid: process.pid, host: hostname(), token: randomUUID() };
  for (;;) {
    let fd: number;
    try {
      fd = openSync(path, "wx");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") return fn();
      const owner = readOwner(path);
      if (owner !== undefined && abandoned(path, owner, o)) breakLock(path, owner);
      else await sleep(o.pollMs);
      continue;
    }
    try {
      writeSync(fd, JSON.stringify(me));
    } catch (error) {
      unlinkSync(path);
      throw error;
    } finally {
      closeSync(fd);
    }
    break;
  }
  try {
    return await fn();
  } finally {
    // Only our own: a lock broken as abandoned while we held it (a suspended process) is another's now.
    if (readOwner(path)?.token === me.token) unlinkSync(path);
  }
}
