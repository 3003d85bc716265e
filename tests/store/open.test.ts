// Opening a database: WAL and foreign keys, ":memory:", bad files, newer schemas, read-only mode, reopening.
import Database from "better-sqlite3";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { DatabaseError, ForkpointError, ValidationError, openForkpoint } from "../../src/index.js";
import { SqliteStore } from "../../src/store/sqlite/store.js";
import { dumpDatabase, rejectionOf, tempDatabases, thrownBy, withRawDatabase } from "../helpers.js";

const dbs = tempDatabases();
const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const journal = JSON.parse(fs.readFileSync(path.join(ROOT, "drizzle", "sqlite", "meta", "_journal.json"), "utf8")) as {
  entries: { when: number; tag: string }[];
};

async function seeded(file: string) {
  const fp = openForkpoint({ path: file });
  const s = await fp.createSession({ userId: "alice", title: "kept" });
  const msgs = await s.append([
    { role: "user", content: "1" },
    { role: "assistant", content: "2" },
  ]);
  await s.setState({ saved: true });
  const cp = await s.checkpoint({ name: "cp" });
  await s.append({ role: "user", content: "3" });
  const { branch } = await s.rollback(cp.id);
  const free = await s.checkpoint({ name: "no branch forks from it" });
  await fp.close();
  return { id: s.id, msgs, cp, free, branch };
}

describe("opening a file database", () => {
  it("creates the file, in WAL mode, with the schema migrated", async () => {
    const file = dbs.path();
    const { fp } = dbs.open({ path: file });
    await fp.createSession({ userId: "alice" });
    expect(fs.existsSync(file)).toBe(true);
    withRawDatabase(file, (db) => {
      expect(db.pragma("journal_mode", { simple: true })).toBe("wal");
      const tables = (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).all() as { name: string }[]).map((t) => t.name);
      expect(tables).toEqual(
        expect.arrayContaining(["sessions", "branches", "entries", "checkpoints", "state_snapshots", "__drizzle_migrations"]),
      );
    });
  });

  it("its connection has foreign keys on, a busy timeout, and synchronous=NORMAL (FULL with durability 'full')", () => {
    const file = dbs.path();
    const store = new SqliteStore({ path: file, durability: "normal", busyTimeoutMs: 15_000, readonly: false });
    try {
      expect(store.db.pragma("foreign_keys", { simple: true })).toBe(1);
      expect(store.db.pragma("journal_mode", { simple: true })).toBe("wal");
      expect(store.db.pragma("busy_timeout", { simple: true })).toBe(15_000);
      expect(store.db.pragma("synchronous", { simple: true })).toBe(1);
      // foreign keys are enforced: an entry on a branch that does not exist is refused
      expect(() =>
        store.db
          .prepare(
            `INSERT INTO entries (id, branch_id, position, kind, msg_count, hash, created_at) VALUES ('e', 'no-such-branch', 1, 'message', 1, 'h', 0)`,
          )
          .run(),
      ).toThrow(/FOREIGN KEY/);
    } finally {
      store.close();
    }
    const full = new SqliteStore({ path: file, durability: "full", busyTimeoutMs: 1_000, readonly: false });
    try {
      expect(full.db.pragma("synchronous", { simple: true })).toBe(2);
    } finally {
      full.close();
    }
  });

  it("records every migration of drizzle/ once, and reopening applies nothing again", async () => {
    const file = dbs.path();
    await openForkpoint({ path: file }).close();
    await openForkpoint({ path: file }).close();
    withRawDatabase(file, (db) => {
      const rows = db.prepare(`SELECT created_at AS at FROM __drizzle_migrations ORDER BY id`).all() as { at: number }[];
      expect(rows.map((r) => Number(r.at))).toEqual(journal.entries.map((e) => e.when));
    });
  });

  it("keeps all data when reopened: sessions, history, state, checkpoints, branches and the current branch", async () => {
    const file = dbs.path();
    const seed = await seeded(file);
    const { fp } = dbs.open({ path: file });
    const s = await fp.getSession(seed.id, { userId: "alice" });
    expect((await s.info()).title).toBe("kept");
    expect((await s.info()).currentBranchId).toBe(seed.branch.id);
    expect(await s.history()).toEqual(seed.msgs);
    expect(await s.getState()).toEqual({ saved: true });
    expect((await s.restore(seed.cp.id)).checkpoint).toEqual(seed.cp);
    expect(await s.branches()).toHaveLength(2);
    expect((await fp.listSessions({ userId: "alice" })).items.map((x) => x.id)).toEqual([seed.id]);
  });

  it("refuses unknown options with a ValidationError naming them, and creates no file", () => {
    const file = dbs.path();
    const e = thrownBy(() => openForkpoint({ path: file, colour: "red" } as never));
    expect(e).toBeInstanceOf(ValidationError);
    expect(e.message).toContain("colour");
    expect(fs.existsSync(file)).toBe(false);
  });

  it("refuses a leaseMs past what a timer holds (its renewal would fire every millisecond), and creates no file", () => {
    const file = dbs.path();
    for (const leaseMs of [2 ** 31, 1e15]) {
      const e = thrownBy(() => openForkpoint({ path: file, leaseMs }));
      expect(e).toBeInstanceOf(ValidationError);
      expect(e.field).toBe("leaseMs");
    }
    expect(fs.existsSync(file)).toBe(false);
    expect(() => openForkpoint({ postgres: "postgres://127.0.0.1:1/x", leaseMs: 1e15 })).toThrow(ValidationError);
  });
});

describe("opening while another process writes", () => {
  it("an up-to-date database opens and reads without waiting for the writer (opening takes no write lock)", async () => {
    const file = dbs.path();
    const { id } = await seeded(file);
    const writer = new Database(file);
    try {
      writer.exec("BEGIN IMMEDIATE");
      const { fp } = dbs.open({ path: file, busyTimeoutMs: 50 });
      expect((await (await fp.getSession(id, { userId: "alice" })).history()).length).toBeGreaterThan(0);
    } finally {
      writer.exec("ROLLBACK");
      writer.close();
    }
  });

  it("a database that needs migrating, locked past the busy timeout: DatabaseError BUSY (not NOT_A_DATABASE)", () => {
    const file = dbs.path();
    const writer = new Database(file);
    try {
      writer.pragma("journal_mode = WAL");
      writer.exec("CREATE TABLE unrelated (x)");
      writer.exec("BEGIN IMMEDIATE");
      const e = thrownBy(() => openForkpoint({ path: file, busyTimeoutMs: 50 }));
      expect(e).toBeInstanceOf(DatabaseError);
      expect(e.code).toBe("BUSY");
    } finally {
      writer.exec("ROLLBACK");
      writer.close();
    }
  });
});

describe('opening ":memory:"', () => {
  it("works, and each in-memory database is private", async () => {
    const a = dbs.track(openForkpoint({ path: ":memory:" }));
    const b = dbs.track(openForkpoint({ path: ":memory:" }));
    const s = await a.createSession({ userId: "alice" });
    await s.append({ role: "user", content: "hi" });
    const cp = await s.checkpoint();
    expect((await s.restore(cp.id)).history.map((m) => m.content)).toEqual(["hi"]);
    expect((await a.listSessions({ userId: "alice" })).items).toHaveLength(1);
    expect((await b.listSessions({ userId: "alice" })).items).toHaveLength(0);
  });
});

describe("refusing to open", () => {
  it("a file that is not SQLite: DatabaseError, and the file is left as it was", () => {
    const file = dbs.path("notes.txt");
    const text = "this is not a database\n".repeat(200);
    fs.writeFileSync(file, text);
    const e = thrownBy(() => openForkpoint({ path: file }));
    expect(e).toBeInstanceOf(DatabaseError);
    expect(e).toBeInstanceOf(ForkpointError);
    expect(e.code).toBe("NOT_A_DATABASE");
    expect(fs.readFileSync(file, "utf8")).toBe(text);
  });

  it("a database migrated by a newer version (a later __drizzle_migrations entry): SCHEMA_TOO_NEW, database unchanged", async () => {
    const file = dbs.path();
    await seeded(file);
    const newest = Math.max(...journal.entries.map((e) => e.when));
    withRawDatabase(file, (db) =>
      db.prepare(`INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('future', ?)`).run(newest + 86_400_000),
    );
    const before = dumpDatabase(file);
    const e = thrownBy(() => openForkpoint({ path: file }));
    expect(e).toBeInstanceOf(DatabaseError);
    expect(e.code).toBe("SCHEMA_TOO_NEW");
    expect(dumpDatabase(file)).toEqual(before);
  });

  it("a database migrated by a newer version, even read-only: SCHEMA_TOO_NEW", async () => {
    const file = dbs.path();
    await seeded(file);
    const newest = Math.max(...journal.entries.map((e) => e.when));
    withRawDatabase(file, (db) =>
      db.prepare(`INSERT INTO __drizzle_migrations (hash, created_at) VALUES ('future', ?)`).run(newest + 86_400_000),
    );
    let e: unknown;
    try {
      dbs.track(openForkpoint({ path: file, readonly: true }));
    } catch (error) {
      e = error;
    }
    expect(e).toBeInstanceOf(DatabaseError);
    expect((e as DatabaseError).code).toBe("SCHEMA_TOO_NEW");
  });

  it("a missing file in read-only mode: DatabaseError CANNOT_OPEN, and no file is created", () => {
    const file = dbs.path();
    const e = thrownBy(() => openForkpoint({ path: file, readonly: true }));
    expect(e).toBeInstanceOf(DatabaseError);
    expect(e.code).toBe("CANNOT_OPEN");
    expect(fs.existsSync(file)).toBe(false);
  });
});

describe("read-only mode", () => {
  it("reads everything and refuses every write with DatabaseError READ_ONLY, leaving the database unchanged", async () => {
    const file = dbs.path();
    const seed = await seeded(file);
    const before = dumpDatabase(file);
    const { fp } = dbs.open({ path: file, readonly: true });

    const s = await fp.getSession(seed.id, { userId: "alice" });
    expect(await s.history()).toEqual(seed.msgs);
    expect(await s.getState()).toEqual({ saved: true });
    expect((await s.restore(seed.cp.id)).history).toEqual(seed.msgs);
    expect((await fp.listSessions({ userId: "alice" })).items).toHaveLength(1);
    expect((await fp.listCheckpoints({ userId: "alice" })).items).toHaveLength(2);
    expect(await s.branches()).toHaveLength(2);
    expect((await s.timeline()).items.length).toBeGreaterThan(0);

    const writes: [string, () => Promise<unknown>][] = [
      ["createSession", () => fp.createSession({ userId: "alice" })],
      ["append", () => s.append({ role: "user", content: "x" })],
      ["setState", () => s.setState({ x: 1 })],
      ["checkpoint", () => s.checkpoint({ name: "nope" })],
      ["undo (a move back)", () => s.undo()],
      ["edit", () => s.edit(seed.msgs[0]!.id, { role: "user", content: "x" })],
      ["switchBranch", () => s.switchBranch(seed.branch.parentId!)],
      ["deleteCheckpoint", () => s.deleteCheckpoint(seed.free.id)],
    ];
    for (const [name, write] of writes) {
      const e = await rejectionOf(write);
      expect(e, name).toBeInstanceOf(DatabaseError);
      expect(e.code, name).toBe("READ_ONLY");
    }
    // A rollback to where the session already is writes nothing: read-only, it returns the current branch.
    expect((await s.rollback(seed.cp.id)).branch.id).toBe(seed.branch.id);
    await fp.close();
    expect(dumpDatabase(file)).toEqual(before);
  });

  it("leaves a database at rest as it found it: no -wal or -shm file stays behind a read", async () => {
    const file = dbs.path();
    await seeded(file);
    const listing = () =>
      fs
        .readdirSync(path.dirname(file))
        .filter((f) => f.startsWith(path.basename(file)))
        .sort();
    const before = listing();
    expect(before).toEqual([path.basename(file)]);
    const fp = openForkpoint({ path: file, readonly: true });
    expect((await fp.listSessions({ userId: "alice" })).items).toHaveLength(1);
    await fp.close();
    expect(listing()).toEqual(before);
  });

  it("leaves another connection's -wal and -shm files in place", async () => {
    const file = dbs.path();
    const seed = await seeded(file);
    const writer = openForkpoint({ path: file });
    await (await writer.getSession(seed.id, { userId: "alice" })).append({ role: "user", content: "still open" });
    const reader = openForkpoint({ path: file, readonly: true });
    expect((await reader.listSessions({ userId: "alice" })).items).toHaveLength(1);
    await reader.close();
    expect(fs.existsSync(`${file}-wal`)).toBe(true);
    const s = await writer.getSession(seed.id, { userId: "alice" });
    expect((await s.history()).at(-1)!.content).toBe("still open");
    await writer.close();
  });
});

describe("after close", () => {
  it("every call is refused with DatabaseError CLOSED, and close is idempotent", async () => {
    const { fp } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await fp.close();
    await fp.close();
    for (const call of [() => s.history(), () => s.append({ role: "user", content: "x" }), () => fp.listSessions({ userId: "alice" })]) {
      const e = await rejectionOf(call);
      expect(e).toBeInstanceOf(DatabaseError);
      expect(e.code).toBe("CLOSED");
    }
  });
});
