// The WAL checkpoint worker (`walWorker`): off by default; it copies the log into the database file off the writing
// thread, closing folds the WAL back, a process exits whether it closes or not, and the writer checkpoints itself
// again if the worker stops.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { SqliteStore } from "../../src/store/sqlite/store.js";
import { tempDatabases, thrownBy } from "../helpers.js";
import { nodeArgs } from "../fixtures/compiled.js";

const dbs = tempDatabases();
const WRITER = fileURLToPath(new URL("../fixtures/wal-worker-writer.ts", import.meta.url));

function openStore(file: string, walWorker = true): SqliteStore {
  const store = new SqliteStore({ path: file, durability: "normal", busyTimeoutMs: 1_000, readonly: false, walWorker });
  store.db.exec("CREATE TABLE IF NOT EXISTS filler (x BLOB)");
  return store;
}

async function writeFiller(store: SqliteStore, count: number): Promise<void> {
  const insert = store.db.prepare("INSERT INTO filler VALUES (randomblob(3000))");
  for (let i = 0; i < count; i++)
    await store.write({ global: true }, function* () {
      insert.run();
    });
}

/** The id the next worker thread gets: ids count every thread this process has started, ours included. */
async function nextThreadId(): Promise<number> {
  const probe = new Worker("", { eval: true });
  const id = probe.threadId;
  await new Promise((done) => probe.once("exit", done));
  return id + 1;
}

/** Waits for the worker's replies (messages between threads), failing after a generous bound rather than hanging. */
async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
  expect(check()).toBe(true);
}

describe("WAL checkpoints on a worker thread", () => {
  it("is off unless asked for: a database opened without walWorker checkpoints in the writer, as SQLite does", async () => {
    const store = openStore(dbs.path(), false);
    try {
      await writeFiller(store, 300);
      expect(store.checkpointer).toBeUndefined();
      expect(store.db.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
    } finally {
      await store.close();
    }
    expect(thrownBy(() => openForkpoint({ path: dbs.path(), walWorker: "yes" as never }))).toMatchObject({ code: "VALIDATION_ERROR" });
  });

  it("openForkpoint starts no thread by default, and one with walWorker: true", async () => {
    const threadsStarted = async (options: { walWorker?: boolean }) => {
      const before = await nextThreadId();
      const fp = openForkpoint({ path: dbs.path(), ...options });
      const s = await fp.createSession({ userId: "alice" });
      for (let i = 0; i < 300; i++) await s.append({ role: "user", content: `m${i}` });
      await fp.close();
      return (await nextThreadId()) - before - 1; // minus the second probe itself
    };
    expect(await threadsStarted({})).toBe(0);
    expect(await threadsStarted({ walWorker: false })).toBe(0);
    expect(await threadsStarted({ walWorker: true })).toBe(1);
  });

  it("starts only after the first 256 writes; then the worker copies frames and the writer's own threshold is raised", async () => {
    const store = openStore(dbs.path());
    try {
      await writeFiller(store, 255);
      expect(store.checkpointer!.framesCopied).toBe(0);
      expect(store.db.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
      await writeFiller(store, 64);
      expect(store.db.pragma("wal_autocheckpoint", { simple: true })).toBe(8000);
      await until(() => store.checkpointer!.framesCopied > 0);
    } finally {
      await store.close();
    }
  });

  it("closing stops the worker first, so the writer's close folds the WAL into the file and removes it", async () => {
    const file = dbs.path();
    const store = openStore(file);
    await writeFiller(store, 400);
    await until(() => store.checkpointer!.framesCopied > 0);
    await writeFiller(store, 5);
    expect(fs.existsSync(`${file}-wal`)).toBe(true);
    await store.close();
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
    expect(store.closed).toBe(true);
    const reopened = openStore(file);
    try {
      expect(reopened.db.prepare("SELECT count(*) FROM filler").pluck().get()).toBe(405);
    } finally {
      await reopened.close();
    }
  });

  it("a worker that cannot open the database falls back to the writer's own checkpoints; closing still closes", async () => {
    const file = dbs.path();
    const store = openStore(file);
    await writeFiller(store, 200);
    // The writer keeps its open (unlinked) file; the worker, opening by path, finds nothing there.
    fs.rmSync(file);
    await writeFiller(store, 60);
    await until(() => !store.checkpointer!.running);
    expect(store.db.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
    await writeFiller(store, 40);
    expect(store.checkpointer!.framesCopied).toBe(0);
    expect(store.db.prepare("SELECT count(*) FROM filler").pluck().get()).toBe(300);
    await store.close();
    expect(store.db.open).toBe(false);
  });

  it("closing while a worker that cannot open the database is starting resolves, and closes the database", async () => {
    const file = dbs.path();
    const store = openStore(file);
    await writeFiller(store, 255);
    fs.rmSync(file);
    await writeFiller(store, 1); // the 256th write starts the worker, whose open will fail
    expect(store.checkpointer!.running).toBe(true);
    await store.close();
    expect(store.db.open).toBe(false);
  });

  it("closing right after the worker starts, twice, resolves once the database is closed", async () => {
    const file = dbs.path();
    const store = openStore(file);
    await writeFiller(store, 256);
    expect(store.checkpointer!.running).toBe(true);
    const first = store.close();
    const second = store.close();
    await second;
    expect(store.db.open).toBe(false);
    expect(fs.existsSync(`${file}-wal`)).toBe(false);
    await first;
  });

  it("if the worker stops, the writer checkpoints itself again as SQLite does by default", async () => {
    const store = openStore(dbs.path());
    try {
      await writeFiller(store, 300);
      expect(store.db.pragma("wal_autocheckpoint", { simple: true })).toBe(8000);
      await store.checkpointer!.close();
      expect(store.db.pragma("wal_autocheckpoint", { simple: true })).toBe(1000);
      const before = store.checkpointer!.framesCopied;
      await writeFiller(store, 100);
      expect(store.checkpointer!.framesCopied).toBe(before);
      expect(store.db.prepare("SELECT count(*) FROM filler").pluck().get()).toBe(400);
    } finally {
      await store.close();
    }
  });

  it.each(["close", "leave-open"])(
    "a process that ends with %s exits by itself with code 0 once its work is done, and its writes are all there",
    async (ending) => {
      const file = dbs.path();
      const run = spawnSync(process.execPath, [...nodeArgs(WRITER), file, "400", ending], { encoding: "utf8", timeout: 60_000 });
      expect(run.error).toBeUndefined();
      expect(run.stderr).toBe("");
      expect(run.status).toBe(0);
      if (ending === "close") expect(fs.existsSync(`${file}-wal`)).toBe(false);
      const sessionId = run.stdout.trim();
      const fp = openForkpoint({ path: file });
      try {
        const s = await fp.getSession(sessionId, { userId: "alice" });
        expect(await s.history()).toHaveLength(800);
        expect((await fp.listCheckpoints({ userId: "alice", limit: 1 })).items[0]!.name).toBe("t399");
      } finally {
        await fp.close();
      }
    },
  );
});
