// An SQLite database in the workspace (an app's own, or another forkpoint's): its -wal and -shm files are never captured
// apart from it, and a restore never writes the database while a program has it open (its -wal file beside it): a
// forced rollback is refused rather than corrupt it. Closed, it is a file like any other, rewound whole.
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { expect, it } from "vitest";
import { tempDir } from "../fixtures/file-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

const rowsOf = (file: string) => {
  const db = new Database(file, { readonly: true });
  try {
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    return (db.prepare("SELECT n FROM t ORDER BY n").all() as { n: number }[]).map((r) => r.n);
  } finally {
    db.close();
  }
};

it("leaves an open database's -wal and -shm out, refuses to rewind it while open, and rewinds it once closed", async () => {
  const ws = tempDir("forkpoint-sqlite-ws-");
  const file = path.join(ws, "app.db");
  const app = new Database(file);
  app.pragma("journal_mode = WAL");
  app.exec("CREATE TABLE t (n INTEGER)");
  app.prepare("INSERT INTO t VALUES (1)").run();
  app.pragma("wal_checkpoint(TRUNCATE)");
  fs.writeFileSync(path.join(ws, "notes-journal"), "a user's file, not SQLite's\n");
  expect(fs.existsSync(`${file}-wal`)).toBe(true);

  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  const attached = await s.attachWorkspace(ws);
  expect(attached.files).toBe(2);
  expect(attached.skipped?.map((f) => f.path).sort()).toEqual(["app.db-shm", "app.db-wal"]);
  expect(attached.skipped?.[0]?.reason).toContain("SQLite database app.db");
  const cp = await s.checkpoint({ name: "one row" });

  for (const n of [2, 3]) app.prepare("INSERT INTO t VALUES (?)").run(n);
  // Only the -wal file changed: no drift, nothing for a rewind to write.
  expect(await s.diffFiles(cp.id, "disk", { patch: false })).toMatchObject({ added: [], modified: [], deleted: [] });
  app.pragma("wal_checkpoint(TRUNCATE)");
  expect(await s.diffFiles(cp.id, "disk", { patch: false })).toMatchObject({ modified: ["app.db"] });

  const plan = await s.plan({ checkpointId: cp.id, scope: "files" });
  expect(plan.blocked).toContain("app.db is an SQLite database in use (app.db-wal is beside it)");
  const refused = await rejectionOf(s.rollback(cp.id, { scope: "files", force: true }));
  expect(refused).toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(refused.message).toContain("app.db is an SQLite database in use");
  app.prepare("INSERT INTO t VALUES (4)").run();
  expect((app.prepare("SELECT count(*) AS c FROM t").get() as { c: number }).c).toBe(4);

  app.close();
  expect(fs.existsSync(`${file}-wal`)).toBe(false);
  const r = await s.rollback(cp.id, { scope: "files", force: true });
  expect(r.savedDrift?.files).toEqual(["app.db"]);
  expect(rowsOf(file)).toEqual([1]);
  expect(fs.readFileSync(path.join(ws, "notes-journal"), "utf8")).toBe("a user's file, not SQLite's\n");
});

it("says how to clear the files a reader left beside a closed database, and rewinds it once that is done", async () => {
  const ws = tempDir("forkpoint-sqlite-left-");
  const file = path.join(ws, "app.db");
  const made = new Database(file);
  made.pragma("journal_mode = WAL");
  made.exec("CREATE TABLE t (n INTEGER)");
  made.prepare("INSERT INTO t VALUES (1)").run();
  made.close();
  const { fp } = dbs.open();
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  const cp = await s.checkpoint({ name: "one row" });
  const writer = new Database(file);
  writer.prepare("INSERT INTO t VALUES (2)").run();
  writer.close();
  // A read-only reader leaves the -wal and -shm files behind, with no program holding the database.
  const reader = new Database(file, { readonly: true });
  reader.prepare("SELECT count(*) FROM t").get();
  reader.close();
  expect(fs.existsSync(`${file}-wal`)).toBe(true);
  const refused = await rejectionOf(s.rollback(cp.id, { scope: "files", force: true }));
  expect(refused.message).toContain("if none has it open, read it once read-write (sqlite3 app.db 'SELECT count(*) FROM sqlite_master')");
  // What the text says, done through the same library the sqlite3 shell uses.
  const once = new Database(file);
  once.prepare("SELECT count(*) FROM sqlite_master").get();
  once.close();
  expect(fs.existsSync(`${file}-wal`)).toBe(false);
  await s.rollback(cp.id, { scope: "files", force: true });
  expect(rowsOf(file)).toEqual([1]);
});
