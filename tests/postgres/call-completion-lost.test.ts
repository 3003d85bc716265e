// A tool call whose run ended but whose completion write lost its connection (a failover, a terminated backend) in a
// server that lives on: `invoke` rejects with CANNOT_CONNECT, and the handle writes the completion by itself, once, with
// the run's result or error, when the connection is back (as it resumes its own interrupted move, issue 32 item 9),
// directly or through a transaction-mode PgBouncer. A retry with the same requestId answers with the recorded outcome
// without running the tool again, and the next move undoes the call. A handle closed during the outage stops trying:
// the call stays unknown, as after a crash.
import path from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { defineTool, openForkpoint } from "../../src/index.js";
import { heldWriteTool, readOrNull, tempDir, type ToolCallRecord } from "../fixtures/file-tools.js";
import { freshPgDatabase, pgPooler, pgServer } from "../fixtures/postgres-database.js";

const url = await pgServer();
const pooler = url ? await pgPooler() : undefined;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A session whose `held_write` call (request "r1") has run and whose completion's write lost its connection: the write
 * waits on a lock held by `admin`, whose server then ends the waiting connection. `outage` also shuts the database to
 * new connections before the lock is let go (until `admin` allows them again).
 */
async function lostCompletion(o: { outage: boolean; viaPooler?: boolean; tool?: "held_write" | "held_fail" }) {
  const db = await freshPgDatabase();
  const name = new URL(db).pathname.slice(1);
  // Through the transaction-mode pooler: the same database, forkpoint's connections made by PgBouncer.
  const through = new URL(pooler ?? db);
  through.pathname = `/${name}`;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let started!: () => void;
  const running = new Promise<void>((r) => (started = r));
  const calls: ToolCallRecord[] = [];
  // Its run ends with an error, once let go.
  const heldFail = defineTool<{ path: string; text: string }, null>({
    name: "held_fail",
    run: async (args, ctx) => {
      calls.push({ tool: "held_fail", op: "run", invocationId: ctx.invocationId, replay: ctx.replay, args, ok: false, pid: process.pid });
      started();
      await gate;
      throw new Error("disk full");
    },
    undo: () => undefined,
  });
  const tools = [heldWriteTool({ calls, gate, onRun: () => started() }), heldFail];
  const fp = openForkpoint(o.viaPooler ? { postgres: through.href, preparedStatements: false, tools } : { postgres: db, tools });
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  const locker = new pg.Client({ connectionString: db });
  // Its own connection ends with the outage's.
  locker.on("error", () => undefined);
  await locker.connect();
  const allow = (yes: boolean) => admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS ${yes}`);
  const s = await fp.createSession({ userId: "u" });
  const before = await s.checkpoint({ name: "before" });
  const file = path.join(tempDir(), "held.txt");
  const args = { path: file, text: "held" };
  const call = s.invoke(o.tool ?? "held_write", args, { requestId: "r1" });
  call.catch(() => undefined);
  await running;
  await locker.query("BEGIN");
  await locker.query("LOCK TABLE tool_results IN ACCESS EXCLUSIVE MODE");
  release();
  let waiting: number[] = [];
  while (waiting.length === 0) {
    await sleep(20);
    const { rows } = await locker.query<{ pid: number }>(
      `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
    );
    waiting = rows.map((r) => r.pid);
  }
  if (o.outage) {
    await allow(false);
    // The waiting completion ends first, while the lock still holds it: ended together, the locker's end could let it
    // take the lock and commit (its statements are already sent) before its own end lands.
    for (const pid of waiting) await admin.query("SELECT pg_terminate_backend($1, 5000)", [pid]);
    // Until none is left: a connection that was signing in as connections were shut out shows up only after.
    for (;;) {
      const { rowCount } = await admin.query(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
        [name],
      );
      if (rowCount === 0) break;
      await sleep(20);
    }
    await locker.end().catch(() => undefined);
  } else {
    for (const pid of waiting) await locker.query("SELECT pg_terminate_backend($1)", [pid]);
    await locker.query("ROLLBACK");
    await locker.end();
  }
  const end = async () => {
    await allow(true);
    await admin.end();
    await fp.close();
  };
  return { db, fp, s, before, file, args, call, calls, tools, allow, end };
}

describe.skipIf(!url)("a tool call whose completion loses its connection", () => {
  const retried = async (viaPooler: boolean) => {
    const t = await lostCompletion({ outage: false, viaPooler });
    try {
      await expect(t.call).rejects.toMatchObject({ code: "CANNOT_CONNECT" });
      expect(readOrNull(t.file)).toBe("held"); // the tool ran

      // The connection is back: a retry of the request answers with the call's result, without running it again.
      expect(await t.s.invoke("held_write", t.args, { requestId: "r1" })).toEqual({ previous: null });
      expect(t.calls.filter((c) => c.op === "run")).toHaveLength(1);
      expect((await t.s.toolTrack()).map((c) => [c.status, c.applied])).toEqual([["succeeded", true]]);
      const back = await t.s.rollback(t.before.id);
      expect({ undone: back.undone.length, unknown: back.unknown.length }).toEqual({ undone: 1, unknown: 0 });
      expect(readOrNull(t.file)).toBeNull();
    } finally {
      await t.end();
    }
  };

  it("is recorded by its live server once the connection is back: the retry answers, the next move undoes it", () => retried(false));

  it.skipIf(!pooler)("is recorded so through a transaction-mode PgBouncer too", () => retried(true));

  it("is recorded with no retry at all, once the database takes connections again; a later retry answers", async () => {
    const t = await lostCompletion({ outage: true });
    try {
      await expect(t.call).rejects.toMatchObject({ code: "CANNOT_CONNECT" });
      const seen: string[] = [];
      t.fp.on("tool", (invocation) => void seen.push(invocation.status));
      await t.allow(true);
      // Nobody asks: the handle writes the completion by itself.
      let track = await t.s.toolTrack();
      while (track[0]!.status === "running") {
        await sleep(20);
        track = await t.s.toolTrack();
      }
      expect(track.map((c) => [c.status, c.applied, c.result])).toEqual([["succeeded", true, { previous: null }]]);
      expect(seen).toEqual(["succeeded"]);
      expect(await t.s.invoke("held_write", t.args, { requestId: "r1" })).toEqual({ previous: null });
      expect(t.calls.filter((c) => c.op === "run")).toHaveLength(1);
      const back = await t.s.rollback(t.before.id);
      expect({ undone: back.undone.length, unknown: back.unknown.length }).toEqual({ undone: 1, unknown: 0 });
      expect(readOrNull(t.file)).toBeNull();
    } finally {
      await t.end();
    }
  });

  it("records a failed run's error so: the retry rejects with it, and nothing is applied", async () => {
    const t = await lostCompletion({ outage: false, tool: "held_fail" });
    try {
      await expect(t.call).rejects.toMatchObject({ code: "CANNOT_CONNECT" });
      await expect(t.s.invoke("held_fail", t.args, { requestId: "r1" })).rejects.toThrow("disk full");
      expect(t.calls.filter((c) => c.op === "run")).toHaveLength(1);
      expect((await t.s.toolTrack()).map((c) => [c.status, c.applied, c.error?.message])).toEqual([["failed", false, "disk full"]]);
    } finally {
      await t.end();
    }
  });

  it("stays unknown when its handle closes during the outage: close does not wait for the database", async () => {
    const t = await lostCompletion({ outage: true });
    try {
      await expect(t.call).rejects.toMatchObject({ code: "CANNOT_CONNECT" });
      await t.fp.close(); // the database still refuses connections: the handle gives up writing the completion
      await t.allow(true);
      await using later = openForkpoint({ postgres: t.db, tools: t.tools, recover: false });
      const s = await later.getSession(t.s.id, { userId: "u" });
      expect((await s.toolTrack()).map((c) => c.status)).toEqual(["running"]);
      await expect(s.invoke("held_write", t.args, { requestId: "r1" })).rejects.toMatchObject({ code: "CALL_UNKNOWN" });
      expect(t.calls.filter((c) => c.op === "run")).toHaveLength(1);
    } finally {
      await t.end();
    }
  });
});
