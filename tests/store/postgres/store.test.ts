// PostgresStore on a real server: exact round-trips, leases, errors, rollback, and write units that lock sessions.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Body, NewSession } from "../../../src/store/port/index.js";
import { MIGRATIONS } from "../../../src/store/postgres/migrations.generated.js";
import { PostgresStore } from "../../../src/store/postgres/store.js";
import { MIGRATIONS_TABLE } from "../../../src/store/postgres/tables.js";
import { freshPgDatabase, pgServer } from "../../fixtures/postgres-database.js";

const server = await pgServer();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const session = (id: string, over: Partial<NewSession> = {}): NewSession => ({
  id,
  userId: "u",
  title: null,
  metadata: null,
  currentBranchId: `${id}-b`,
  originSessionId: null,
  originCheckpointId: null,
  createdAt: 1732640000123.456,
  updatedAt: 1732640000123.456,
  ...over,
});

describe.skipIf(!server)("PostgresStore", () => {
  let store: PostgresStore, url: string;

  beforeAll(async () => {
    url = await freshPgDatabase();
    store = await PostgresStore.open(url);
    for (const id of ["a", "b", "c"]) await store.write({ sessionId: id }, (tx) => tx.insertSession(session(id)));
  });
  afterAll(async () => {
    await store?.close();
  });

  it("reads back every JS double it stores, exactly", async () => {
    const times = [1732640000123.456, 1732640000123.4561, 0.1 + 0.2, Number.MAX_SAFE_INTEGER + 0.5, 5e-324, 1e300, -0.000001];
    for (let i = 0; i < 300; i++) times.push(1.7e12 + Math.random() * 1e11 + Math.floor(Math.random() * 1e6) / 1e3);
    await store.write({ sessionId: "a" }, function* (tx) {
      for (const [i, createdAt] of times.entries()) {
        yield* tx.insertEvent(
          { sessionId: "a", kind: "t", refId: String(i), branchId: "a-b", detail: null, createdAt },
          { asRecorded: true },
        );
      }
    });
    const events = await store.read((tx) => tx.sessionEvents("a"));
    expect(events.map((e) => e.createdAt)).toStrictEqual(times);
  });

  it("reads int8 columns as JS numbers, above 2^32 too", async () => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(`SELECT setval(pg_get_serial_sequence('sessions', 'seq'), $1)`, [2 ** 40]);
    await admin.end();
    await store.write({ sessionId: "big" }, (tx) => tx.insertSession(session("big")));
    const row = await store.query((tx) => tx.getSession("big"));
    expect(row?.seq).toBe(2 ** 40 + 1);
    const count = await store.query((tx) => tx.countBranches("big"));
    expect(count).toBe(0);
    expect(await store.query((tx) => tx.listSessions("u", 2 ** 40 + 1, 10))).toHaveLength(3);
  });

  it("times a move's lease by the database's clock: claimed only once it runs out, renewed only by its holder", async () => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const dbNow = async () =>
      (await admin.query<{ t: number }>(`SELECT extract(epoch from clock_timestamp())::float8 * 1000 AS t`)).rows[0]!.t;
    const leaseUntil = async () => (await admin.query<{ t: number }>(`SELECT lease_until AS t FROM moves WHERE id = 'm'`)).rows[0]!.t;
    const expire = () => admin.query(`UPDATE moves SET lease_until = 0 WHERE id = 'm'`);
    const held = () =>
      store.read(function* (tx) {
        return (yield* tx.runningMoves("a"))[0]!.leaseHeld;
      });
    /** Runs `body` and checks the lease it leaves is `ms` from when it ran, on the database's clock (not this process's). */
    const leasedFor = async <T>(ms: number, body: Body<T>) => {
      const before = await dbNow();
      const value = await store.write({ sessionId: "a" }, body);
      const after = await dbNow();
      const until = await leaseUntil();
      expect(until).toBeGreaterThanOrEqual(before + ms);
      expect(until).toBeLessThanOrEqual(after + ms);
      return value;
    };
    try {
      const owner = { pid: 1, pidStart: "x" };
      const next = { pid: 2, pidStart: null };
      await leasedFor(60_000, function* (tx) {
        yield* tx.insertMove(
          { id: "m", sessionId: "a", kind: "rollback", spec: "{}", status: "running", ...owner, createdAt: 1, finishedAt: null },
          60_000,
        );
        yield* tx.insertMoveSteps([{ moveId: "m", idx: 0, op: "undo", entryId: "e", status: "pending", result: null, error: null }]);
      });
      expect(await held()).toBe(true);
      // Read as its owner's, but its lease holds: a recoverer's claim is refused.
      expect(await store.write({ sessionId: "a" }, (tx) => tx.claimMove("m", owner, next, 60_000))).toBe(false);

      await expire();
      expect(await held()).toBe(false);
      // Its owner writing a step renews the lease in the same statement.
      expect(await leasedFor(2_000, (tx) => tx.setMoveStep(owner, "m", 0, "running", null, null, 2_000))).toBe(true);
      expect(await held()).toBe(true);

      await expire();
      expect(await leasedFor(1_000, (tx) => tx.claimMove("m", owner, next, 1_000))).toBe(true);
      const taken = await store.read((tx) => tx.runningMoves("a"));
      expect(taken[0]).toMatchObject({ pid: 2, pidStart: null, leaseHeld: true });
      // The old owner renews nothing and writes nothing; the new one renews.
      const stale = await leaseUntil();
      expect(await store.write({ sessionId: "a" }, (tx) => tx.renewMove("m", owner, 60_000))).toBe(false);
      expect(await store.write({ sessionId: "a" }, (tx) => tx.setMoveStep(owner, "m", 0, "done", null, null, 60_000))).toBe(false);
      expect(await leaseUntil()).toBe(stale);
      expect(await leasedFor(3_000, (tx) => tx.renewMove("m", next, 3_000))).toBe(true);
    } finally {
      await admin.end();
    }
  });

  it("turns a unique violation into ConflictError and leaves the database as it was", async () => {
    const before = await store.dump();
    const failing: Body<void> = function* (tx) {
      yield* tx.insertEvent({ sessionId: "a", kind: "x", refId: "x", branchId: "x", detail: null, createdAt: 1 });
      yield* tx.insertSession(session("a"));
    };
    await expect(store.write({ sessionId: "a" }, failing)).rejects.toMatchObject({ name: "ConflictError", code: "ALREADY_EXISTS" });
    await expect(
      store.write({ sessionId: "a" }, function* (tx) {
        yield* tx.insertEvent({ sessionId: "a", kind: "x", refId: "x", branchId: "x", detail: null, createdAt: 1 });
        throw new Error("engine says no");
      }),
    ).rejects.toThrow("engine says no");
    expect(await store.dump()).toBe(before);
  });

  it("refuses writes in a read unit", async () => {
    await expect(store.read((tx) => tx.insertSession(session("r")))).rejects.toMatchObject({ code: "READ_ONLY" });
  });

  it("reports its size, vacuums, and has no files of its own", async () => {
    expect(await store.sizeBytes()).toBeGreaterThan(0);
    await store.vacuum();
    expect(store.databaseFiles()).toEqual([]);
    expect(store.capabilities).toEqual({ ownership: "lease", local: false });
    const dump = JSON.parse(await store.dump()) as Record<string, unknown[]>;
    expect(dump.sessions).toHaveLength(4);
    // One row per migration shipped in drizzle/postgres.
    expect(dump[MIGRATIONS_TABLE]).toHaveLength(MIGRATIONS.length);
  });

  /** A unit that notes when its body starts and ends, holding its locks for `holdMs` in between. */
  function timed(holdMs: number, marks: number[]): Body<void> {
    return function* (tx) {
      // Locks are taken with a unit's first statement: its start is marked once that has run.
      yield* tx.getSession("a");
      marks.push(performance.now());
      yield sleep(holdMs);
      marks.push(performance.now());
    };
  }

  it("serializes write units of one session: the second starts after the first commits", async () => {
    const first: number[] = [],
      second: number[] = [];
    const one = store.write({ sessionId: "a" }, timed(300, first));
    await sleep(50);
    await Promise.all([one, store.write({ sessionId: "a" }, timed(0, second))]);
    expect(second[0]).toBeGreaterThanOrEqual(first[1]!);
  });

  it("commits write units of one session in the order they were made, multi-session units too", async () => {
    const event = (sessionId: string, refId: string) => ({ sessionId, kind: "order", refId, branchId: "x", detail: null, createdAt: 1 });
    const made = Array.from({ length: 12 }, (_, i) =>
      i % 4 === 3
        ? store.write({ sessionIds: ["c", "b"] }, function* (tx) {
            yield* tx.insertEvent(event("b", String(i)));
            yield* tx.insertEvent(event("c", String(i)));
          })
        : store.write({ sessionId: "b" }, (tx) => tx.insertEvent(event("b", String(i)))),
    );
    // One that fails keeps its place and lets the next ones go on.
    made.push(
      store.write({ sessionId: "b" }, () =>
        (function* () {
          throw new Error("refused");
        })(),
      ),
    );
    made.push(store.write({ sessionId: "b" }, (tx) => tx.insertEvent(event("b", "last"))));
    await Promise.allSettled(made);
    const order = (await store.read((tx) => tx.sessionEvents("b"))).filter((e) => e.kind === "order").map((e) => e.refId);
    expect(order).toEqual([...Array.from({ length: 12 }, (_, i) => String(i)), "last"]);
  });

  it("runs write units of different sessions at once", async () => {
    const first: number[] = [],
      second: number[] = [];
    const one = store.write({ sessionId: "a" }, timed(300, first));
    await sleep(50);
    await Promise.all([one, store.write({ sessionId: "b" }, timed(0, second))]);
    expect(second[1]).toBeLessThan(first[1]!);
  });

  it("locks every session of a multi-session unit, and everything for a global one", async () => {
    const multi: number[] = [],
      single: number[] = [],
      global: number[] = [],
      after: number[] = [];
    // Each unit is started once the one before holds its locks, or waits for them: on a loaded machine a fixed pause
    // may not be enough for that.
    const until = async (done: () => boolean | Promise<boolean>) => {
      while (!(await done())) await sleep(5);
    };
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const waiting = async () =>
      (
        await admin.query<{ n: string }>(
          "SELECT count(*) AS n FROM pg_locks l JOIN pg_database d ON d.oid = l.database WHERE d.datname = current_database() AND l.locktype = 'advisory' AND NOT l.granted",
        )
      ).rows[0]!.n !== "0";
    const one = store.write({ sessionIds: ["c", "b"] }, timed(300, multi));
    await until(() => multi.length > 0);
    await Promise.all([one, store.write({ sessionId: "b" }, timed(0, single))]);
    expect(single[0]).toBeGreaterThanOrEqual(multi[1]!);

    const session = store.write({ sessionId: "c" }, timed(300, single));
    await until(() => single.length > 2);
    const all = store.write({ global: true }, timed(300, global));
    await until(waiting);
    await admin.end();
    await Promise.all([session, all, store.write({ sessionId: "a" }, timed(0, after))]);
    expect(global[0]).toBeGreaterThanOrEqual(single[3]!);
    expect(after[0]).toBeGreaterThanOrEqual(global[1]!);
  });

  it("lets reads run beside a write unit of the same session", async () => {
    // The write holds its lock until the read is done: a read that waited for it would never end (the test times out).
    let began!: () => void, release!: () => void;
    const holding = new Promise<void>((resolve) => (began = resolve));
    const held = new Promise<void>((resolve) => (release = resolve));
    let ended = false;
    const one = store.write({ sessionId: "a" }, function* (tx) {
      yield* tx.getSession("a");
      began();
      yield held;
      ended = true;
    });
    await holding;
    await store.read((tx) => tx.getSession("a"));
    expect(ended).toBe(false);
    release();
    await one;
    expect(ended).toBe(true);
  });
});
