// Shared test helpers: temporary database files, raw access to them for dumps and tampering, error capture.
import Database from "better-sqlite3";
import fs from "node:fs";
import path from "node:path";
import { afterEach, expect } from "vitest";
import { defineTool, type Forkpoint, type ForkpointOptions } from "../src/index.js";
import { openForkpoint } from "./fixtures/backend.js";
import { makeTrackedTempDir } from "./fixtures/temp-dirs.js";

/** A fresh directory under the OS temp dir, removed after the test that made it (tests/fixtures/temp-dirs.ts). */
export function makeTempDir(prefix = "forkpoint-test-"): string {
  return makeTrackedTempDir(prefix);
}

export function removeDir(dir: string): void {
  fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * Registers an `afterEach` that closes every database opened through it and removes its temp dirs.
 * Call at the top of a test file or a `describe`.
 */
export function tempDatabases() {
  const opened: Forkpoint[] = [];
  const dirs: string[] = [];
  afterEach(async () => {
    for (const fp of opened.splice(0)) await fp.close().catch(() => undefined);
    for (const dir of dirs.splice(0)) removeDir(dir);
  });
  const api = {
    /** A path for a database file that does not exist yet, in a fresh temp dir. */
    path(name = "forkpoint.db"): string {
      const dir = makeTempDir();
      dirs.push(dir);
      return path.join(dir, name);
    },
    /**
     * Opens a forkpoint database on the store under test (tests/fixtures/backend.ts): a new temp file unless
     * `options.path` is given (on PostgreSQL, the database that stands for that path); closed after the test.
     */
    open(options: ForkpointOptions = {}): { fp: Forkpoint; path: string } {
      const file = options.path ?? api.path();
      const fp = openForkpoint({ ...options, path: file });
      opened.push(fp);
      return { fp, path: file };
    },
    /** Tracks a Forkpoint opened elsewhere so it is closed after the test. */
    track(fp: Forkpoint): Forkpoint {
      opened.push(fp);
      return fp;
    },
  };
  return api;
}

export type Dump = Record<string, unknown[]>;

/** Every row of every table (including drizzle's migration table), ordered by rowid, read through a read-only connection. */
export function dumpDatabase(file: string): Dump {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const tables = db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`).all() as {
      name: string;
    }[];
    const out: Dump = {};
    for (const { name } of tables) out[name] = db.prepare(`SELECT * FROM "${name}" ORDER BY rowid`).all();
    return out;
  } finally {
    db.close();
  }
}

/** Number of rows in each table. */
export function countRows(file: string): Record<string, number> {
  const dump = dumpDatabase(file);
  return Object.fromEntries(Object.entries(dump).map(([table, rows]) => [table, rows.length]));
}

/** Per-table difference of two `countRows` results. */
export function rowDelta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const tables = new Set([...Object.keys(before), ...Object.keys(after)]);
  return Object.fromEntries([...tables].sort().map((t) => [t, (after[t] ?? 0) - (before[t] ?? 0)]));
}

/** Opens the file with a plain writable better-sqlite3 connection (to tamper with it, or inspect it) and closes it after `fn`. */
export function withRawDatabase<T>(file: string, fn: (db: Database.Database) => T): T {
  const db = new Database(file, { fileMustExist: true });
  try {
    return fn(db);
  } finally {
    db.close();
  }
}

/** Awaits `promise`, which must reject; returns what it rejected with. */
export async function rejectionOf(promise: Promise<unknown> | (() => Promise<unknown>)): Promise<any> {
  try {
    await (typeof promise === "function" ? promise() : promise);
  } catch (error) {
    return error;
  }
  expect.fail("expected the call to reject, but it resolved");
}

/** Calls `fn`, which must throw synchronously; returns what it threw. */
export function thrownBy(fn: () => unknown): any {
  try {
    fn();
  } catch (error) {
    return error;
  }
  expect.fail("expected the call to throw, but it returned");
}

/** An id shaped like the engine's ("cp_" + 16 characters) that certainly does not exist. */
export function unknownId(prefix: string): string {
  return `${prefix}_${"Z".repeat(16)}`;
}

/** `text` with every occurrence of `id` replaced, to compare error messages about different ids. */
export function withIdMasked(text: string, id: string): string {
  return text.split(id).join("<id>");
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Every file under `root` but those whose path starts with `skipPrefix` (a database's), by relative "/" path, with its text. */
export function filesUnder(root: string, skipPrefix: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (at: string) => {
    for (const e of fs.readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, e.name);
      if (e.isDirectory()) walk(full);
      else if (!full.startsWith(skipPrefix)) out[path.relative(root, full).split(path.sep).join("/")] = fs.readFileSync(full, "utf8");
    }
  };
  walk(root);
  return out;
}

/** A `write_file` tool that writes `name` under `dir`; its undo removes the file. */
export function writeFileTool(dir: string) {
  return defineTool<{ name: string; text: string }, { path: string }>({
    name: "write_file",
    run: async ({ name, text }) => {
      fs.writeFileSync(path.join(dir, name), text);
      return { path: name };
    },
    undo: async ({ result }) => fs.rmSync(path.join(dir, result.path), { force: true }),
  });
}

/** A `write_file` tool on a workspace: writes `rel` under `root` (making its folders); its undo puts back what was there. */
export function restoringWriteTool(root: string) {
  const full = (rel: string) => path.join(root, rel);
  const put = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(full(rel)), { recursive: true });
    fs.writeFileSync(full(rel), text);
  };
  return defineTool<{ rel: string; text: string }, { previous: string | null }>({
    name: "write_file",
    run: async ({ rel, text }) => {
      const previous = fs.existsSync(full(rel)) ? fs.readFileSync(full(rel), "utf8") : null;
      put(rel, text);
      return { previous };
    },
    undo: async ({ args, result }) => {
      if (result.previous === null) fs.rmSync(full(args.rel), { force: true });
      else put(args.rel, result.previous);
    },
  });
}
