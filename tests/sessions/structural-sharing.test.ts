// Structural sharing: each message is stored once, checkpoints copy nothing, rollback adds O(1) rows, size is linear.
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SessionHandle } from "../../src/index.js";
import { makeTempDir, removeDir, rowDelta, tempDatabases } from "../helpers.js";
import { copyDatabase, countRowsOf, onPostgres, openForkpoint, sqlOn, storeSize } from "../fixtures/backend.js";

const dbs = tempDatabases();

/** `messages` messages in batches of `per`, with a checkpoint after each batch. Returns the checkpoints' ids. */
async function fill(s: SessionHandle, messages: number, per: number): Promise<string[]> {
  const checkpoints: string[] = [];
  for (let done = 0; done < messages; done += per) {
    await s.append(
      Array.from({ length: per }, (_, i) => ({
        role: (done + i) % 2 ? "assistant" : "user",
        content: `message number ${done + i} of the conversation`,
      })),
    );
    checkpoints.push((await s.checkpoint({ name: `after ${done + per}` })).id);
  }
  return checkpoints;
}

/** Rows that one rollback adds, per table, on a session filled by `fill` (`cps`: its checkpoints). */
async function rollbackDelta(s: SessionHandle, file: string, cps: string[]): Promise<Record<string, number>> {
  // Past the last checkpoint, so that no rollback is to where the session already is.
  await s.append({ role: "user", content: "after the last checkpoint" });
  const before = await countRowsOf(file);
  await s.rollback(cps[Math.floor(cps.length / 2)]!);
  return rowDelta(before, await countRowsOf(file));
}

function fileSize(file: string): number {
  return fs.statSync(file).size + (fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0);
}

/**
 * One session of 10,000 messages with a checkpoint after every 10, on a database of its own, filled once for the three
 * tests that need it (the fill is most of their time): what the fill added, per table, and the bytes it took. Tests
 * only read it; the one that rolls back does so on a copy.
 */
interface Large {
  file: string;
  sessionId: string;
  cps: string[];
  delta: Record<string, number>;
  bytes: number;
}
let largeDir: string | undefined;
let large: Large;
beforeAll(async () => {
  largeDir = makeTempDir("forkpoint-structural-sharing-");
  const file = path.join(largeDir, "large.db");
  const fp = openForkpoint({ path: file });
  let pgBytes: number | undefined;
  let filled: Omit<Large, "bytes">;
  try {
    const s = await fp.createSession({ userId: "alice" });
    const empty = await countRowsOf(file);
    // PostgreSQL: what its tables and their indexes take beyond an empty database's pages.
    const emptyBytes = onPostgres ? await storeSize(fp) : 0;
    const cps = await fill(s, 10_000, 10);
    filled = { file, sessionId: s.id, cps, delta: rowDelta(empty, await countRowsOf(file)) };
    if (onPostgres) pgBytes = (await storeSize(fp)) - emptyBytes;
  } finally {
    await fp.close(); // on SQLite, folds the WAL into the main file
  }
  large = { ...filled, bytes: pgBytes ?? fileSize(file) };
}, 120_000);
afterAll(() => {
  if (largeDir) removeDir(largeDir);
});

describe("structural sharing", () => {
  it("after 10,000 messages and 1,000 checkpoints on one session, each message is stored once and checkpoints only add checkpoint rows", async () => {
    const { cps, delta, file } = large;
    expect(cps).toHaveLength(1_000);

    expect(delta.entries).toBe(10_000);
    expect(delta.checkpoints).toBe(1_000);
    expect(delta.branches).toBe(0);
    expect(delta.state_snapshots).toBe(0);
    // nothing else grows with the number of messages or checkpoints
    const others = Object.entries(delta).filter(([t]) => t !== "entries" && t !== "checkpoints");
    expect(others.reduce((sum, [, n]) => sum + n, 0)).toBe(0);

    const kinds = await sqlOn(file, `SELECT kind, count(*) AS n FROM entries GROUP BY kind`);
    expect(kinds).toEqual([{ kind: "message", n: 10_000 }]);
    // every message's content is held by exactly one row
    const dup = await sqlOn(file, `SELECT count(*) AS n FROM (SELECT content FROM entries GROUP BY content HAVING count(*) > 1) AS d`);
    expect(dup).toEqual([{ n: 0 }]);

    const { fp } = dbs.open({ path: file });
    const s = await fp.getSession(large.sessionId, { userId: "alice" });
    const history = await s.history();
    expect(history).toHaveLength(10_000);
    expect(history.every((m, i) => m.position === i + 1)).toBe(true);
    const mid = await s.restore(cps[499]!);
    expect(mid.history).toHaveLength(5_000);
    expect(mid.history[4_999]!.content).toBe("message number 4999 of the conversation");
  });

  it("a rollback adds the same number of rows at 10 messages as at 10,000 messages, and no entries", async () => {
    const small = dbs.open();
    const s = await small.fp.createSession({ userId: "alice" });
    const atTen = await rollbackDelta(s, small.path, await fill(s, 10, 10));
    const copy = dbs.path();
    await copyDatabase(large.file, copy);
    const { fp } = dbs.open({ path: copy });
    const atTenThousand = await rollbackDelta(await fp.getSession(large.sessionId, { userId: "alice" }), copy, large.cps);
    expect(atTenThousand).toEqual(atTen);
    expect(atTen.entries).toBe(0);
    expect(atTen.checkpoints).toBe(0);
    expect(atTen.branches).toBe(1);
  });

  it("an edit adds one entry and one branch whatever the history length", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    await fill(s, 5_000, 1_000);
    const history = await s.history();
    const before = await countRowsOf(path);
    await s.edit(history[4_000]!.id, { role: "user", content: "edited" });
    const delta = rowDelta(before, await countRowsOf(path));
    expect(delta).toMatchObject({ entries: 1, branches: 1, checkpoints: 0 });
  });

  it("identical state documents are stored once", async () => {
    const { fp, path } = dbs.open();
    const s = await fp.createSession({ userId: "alice" });
    for (let i = 0; i < 20; i++) await s.setState({ mode: i % 2 ? "a" : "b", list: [1, 2, 3] });
    await s.setState({ list: [1, 2, 3], mode: "a" }); // same document, other key order
    expect((await countRowsOf(path)).state_snapshots).toBe(2);
  });

  it("grows the database file linearly: 10x the messages and checkpoints is about 10x the bytes, not 100x", async () => {
    const sizeAfter = async (messages: number) => {
      const { fp, path: file } = dbs.open();
      const s = await fp.createSession({ userId: "alice" });
      // PostgreSQL: what its tables and their indexes take beyond an empty database's pages.
      const empty = onPostgres ? await storeSize(fp) : 0;
      await fill(s, messages, 10);
      if (onPostgres) return (await storeSize(fp)) - empty;
      await fp.close(); // folds the WAL into the main file
      return fileSize(file);
    };
    // At 10,000: the shared session, measured the same way.
    const ratio = large.bytes / (await sizeAfter(1_000));
    expect(ratio).toBeGreaterThan(5);
    expect(ratio).toBeLessThan(15);
  });
});
