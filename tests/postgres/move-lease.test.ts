// Several app servers on one PostgreSQL database: a live server keeps the move it runs, however many steps it takes and
// whatever the other servers' clocks say, because its lease is renewed all along and timed by the database's clock.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { defineTool, openForkpoint, type Forkpoint, type RecoveryReport, type ToolInvocation } from "../../src/index.js";
import { nodeArgs } from "../fixtures/compiled.js";
import { readLog, writeFileTool } from "../fixtures/file-tools.js";
import { freshPgDatabase, pgServer } from "../fixtures/postgres-database.js";
import { makeTempDir, removeDir } from "../helpers.js";

const url = await pgServer();
const repoRoot = path.resolve(import.meta.dirname, "../..");
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const ids = (list: ToolInvocation[]) => list.map((t) => t.id);
const undone = (log: string) => readLog(log).filter((c) => c.op === "undo");

/** Runs a fixture script in a child process (after `preloads`), and resolves with what it printed once it exits. */
function child(script: string, args: string[], env: NodeJS.ProcessEnv = {}, preloads: string[] = []) {
  const proc = spawn(process.execPath, [...nodeArgs(path.join(repoRoot, script), preloads), ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  proc.stdout.on("data", (d: Buffer) => (out += d.toString()));
  proc.stderr.on("data", (d: Buffer) => (err += d.toString()));
  cleanup.push(() => void proc.kill("SIGKILL"));
  const done = new Promise<{ code: number | null; out: string; err: string }>((resolve) =>
    proc.on("exit", (code) => resolve({ code, out, err })),
  );
  return { proc, done };
}

/** A session with a checkpoint, then `n` write_file calls after it (their invocations, oldest first). */
async function sessionWithCalls(fp: Forkpoint, dir: string, n: number) {
  const s = await fp.createSession({ userId: "u" });
  const cp = await s.checkpoint({ name: "before" });
  for (let i = 0; i < n; i++) await s.invoke("write_file", { path: path.join(dir, `f${i}.txt`), text: `v${i}` });
  return { s, cp, track: await s.toolTrack() };
}

/** A fresh database and its calls' log, where a mover will say it stalled (`marker`), and the peer that takes over. */
async function stallingServers(prefix: string, leaseMs: number) {
  const dir = makeTempDir(prefix);
  cleanup.push(() => removeDir(dir));
  const db = await freshPgDatabase();
  const log = path.join(dir, "calls.log");
  const marker = path.join(dir, "stalled");
  const peer = openForkpoint({ postgres: db, leaseMs, recover: false, tools: [writeFileTool({ logFile: log })] });
  cleanup.push(() => peer.close());
  return { db, dir, log, marker, peer };
}

/**
 * Once the mover says it stalled (its marker file), `peer` recovers until it has taken the move over: what it finished.
 * Then the mover goes on (its go file), at once rather than when its stall's cap runs out.
 */
async function takeOverStalled(peer: Forkpoint, marker: string, mover: ReturnType<typeof child>) {
  for (let i = 0; !fs.existsSync(marker); i++) {
    if (i > 3_000) throw new Error(`the mover never stalled:\n${(await mover.done).err}`);
    await sleep(5);
  }
  let report = await peer.recover();
  for (let i = 0; report.resumed.length === 0; i++) {
    expect(report.failed).toEqual([]);
    if (i > 400) throw new Error("the move was never taken over");
    await sleep(20);
    report = await peer.recover();
  }
  fs.writeFileSync(`${marker}.go`, "");
  return report.resumed[0]!;
}

describe.skipIf(!url)("a move's lease on PostgreSQL", () => {
  it("holds for a live server through many steps, each shorter than the lease and together longer", async () => {
    const LEASE_MS = 1_200;
    // Each undo takes less than a third of the lease (no renewal would fall within one), ten of them twice the lease.
    const UNDO_MS = 250;
    const dir = makeTempDir("forkpoint-pg-lease-");
    cleanup.push(() => removeDir(dir));
    const db = await freshPgDatabase();
    const log = path.join(dir, "calls.log");
    const peer = openForkpoint({ postgres: db, leaseMs: LEASE_MS, recover: false, tools: [writeFileTool({ logFile: log })] });
    cleanup.push(() => peer.close());
    const { s, cp, track } = await sessionWithCalls(peer, dir, 10);

    const mover = child("tests/fixtures/pg-rollback.ts", [db, s.id, "u", cp.id, log, String(LEASE_MS), String(UNDO_MS)]);
    let exited = false;
    void mover.done.then(() => (exited = true));
    for (let i = 0; undone(log).length === 0; i++) {
      if (i > 3_000 || exited) throw new Error(`the mover never started undoing:\n${(await mover.done).err}`);
      await sleep(5);
    }
    // Another server's periodic recover(), over and over while the mover works: it never takes the move over.
    const reports: RecoveryReport[] = [];
    while (!exited) {
      reports.push(await peer.recover());
      await sleep(20);
    }
    const { code, out, err } = await mover.done;
    expect(code, err).toBe(0);
    expect(reports.filter((r) => r.waiting.length === 1).length).toBeGreaterThan(0);
    for (const r of reports) expect({ resumed: r.resumed, failed: r.failed }).toEqual({ resumed: [], failed: [] });

    // The caller's result is the whole move; every undo ran once, in the mover, newest call first.
    const newestFirst = ids(track).reverse();
    expect(JSON.parse(out) as unknown).toEqual({ undone: newestFirst, unknown: [], failed: 0 });
    const undos = undone(log);
    expect(undos.map((c) => c.invocationId)).toEqual(newestFirst);
    expect(new Set(undos.map((c) => c.pid))).toEqual(new Set([mover.proc.pid]));
    expect(await peer.recover()).toMatchObject({ resumed: [], waiting: [] });
    expect((await peer.verify()).ok).toBe(true);
  });

  it("is not taken over by a server whose clock runs ahead by more than the lease", async () => {
    const LEASE_MS = 1_000;
    const dir = makeTempDir("forkpoint-pg-skew-");
    cleanup.push(() => removeDir(dir));
    const db = await freshPgDatabase();
    const log = path.join(dir, "calls.log");
    // The newest call's undo waits for the test: the move stays under way while the other server recovers.
    let started!: () => void;
    let release!: () => void;
    const undoStarted = new Promise<void>((resolve) => (started = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const base = writeFileTool({ logFile: log });
    let first = true;
    const gated = defineTool({
      ...base,
      undo: async (input, ctx) => {
        await base.undo!(input, ctx);
        if (!first) return;
        first = false;
        started();
        await released;
      },
    });
    const mover = openForkpoint({ postgres: db, leaseMs: LEASE_MS, recover: false, tools: [gated] });
    cleanup.push(() => mover.close());
    cleanup.push(() => release());
    const { s, cp, track } = await sessionWithCalls(mover, dir, 3);
    const moving = s.rollback(cp.id);
    // Awaited below; a failing test ends before that.
    moving.catch(() => undefined);
    await undoStarted;

    // The lease outlives its first term while one handler runs: the mover renews it (on the database's clock).
    const admin = new pg.Client({ connectionString: db });
    await admin.connect();
    cleanup.push(() => admin.end());
    const leaseUntil = async () => (await admin.query<{ t: number }>(`SELECT lease_until AS t FROM moves`)).rows[0]!.t;
    const firstTerm = await leaseUntil();
    for (let i = 0; (await leaseUntil()) <= firstTerm + LEASE_MS; i++) {
      if (i > 2_000) throw new Error("the lease was never renewed while the handler ran");
      await sleep(10);
    }

    // Another server, its clock a minute ahead, recovers while the mover is alive and holds its lease: it waits.
    const recoverer = child("tests/fixtures/pg-recover.ts", [db, log, String(LEASE_MS)], { CLOCK_AHEAD_MS: String(60 * LEASE_MS) }, [
      "tests/fixtures/clock-ahead.ts",
    ]);
    const { code, out, err } = await recoverer.done;
    expect(code, err).toBe(0);
    expect(JSON.parse(out) as unknown).toEqual({ resumed: 0, waiting: 1, failed: 0 });

    release();
    const result = await moving;
    const newestFirst = ids(track).reverse();
    expect({ undone: ids(result.undone), unknown: ids(result.unknown) }).toEqual({ undone: newestFirst, unknown: [] });
    const undos = undone(log);
    expect(undos.map((c) => c.invocationId)).toEqual(newestFirst);
    expect(new Set(undos.map((c) => c.pid))).toEqual(new Set([process.pid]));
  });
});

describe.skipIf(!url)("a move taken over from a server that stalled past its lease", () => {
  it.each(["switch", "rollback"] as const)(
    "is finished once, by the server that took it over: the stalled one's %s is refused when it goes on",
    async (verb) => {
      const LEASE_MS = 400;
      const { db, dir, log, marker, peer } = await stallingServers("forkpoint-pg-stall-", LEASE_MS);
      const { s, cp } = await sessionWithCalls(peer, dir, 1);
      const root = (await s.info()).currentBranchId;
      // A switch back to the root replays the call; a rollback to the checkpoint undoes it: one step either way.
      if (verb === "switch") await s.rollback(cp.id);
      const target = verb === "switch" ? root : cp.id;
      const before = (await s.timeline({ limit: 100 })).items.length;

      // The mover stalls right after its only step, past its lease: the peer takes the move over and finishes it.
      const mover = child("tests/fixtures/pg-stalled-move.ts", [db, s.id, "u", verb, target, log, String(LEASE_MS), "3000", marker]);
      const taken = await takeOverStalled(peer, marker, mover);

      // When it goes on, the stalled server finishes nothing: the move is not its own any more.
      const { code, out, err } = await mover.done;
      expect(code, err).toBe(0);
      expect(JSON.parse(out) as unknown).toEqual({ error: "MOVE_TAKEN_OVER" });
      expect((await s.info()).currentBranchId).toBe(taken.branch.id);
      const events = (await s.timeline({ limit: 100 })).items;
      expect(events).toHaveLength(before + 1);
      expect(events[0]!.kind).toBe(verb === "switch" ? "switch" : "branch");
      // The undo stack holds the move once: one undo goes back to where the move left from, and nothing is left after.
      if (verb === "switch") {
        expect((await s.undo()).branch.id).not.toBe(root);
        await expect(s.undo()).resolves.toMatchObject({ branch: { id: root } });
        await expect(s.undo()).rejects.toMatchObject({ code: "NOTHING_TO_UNDO" });
      }
      expect((await peer.verify()).ok).toBe(true);
    },
  );
});

describe.skipIf(!url)("servers that look alike (the same pid, as containers' node processes are)", () => {
  it("are told apart by their leases: a stalled server whose move was taken over runs none of its steps again", async () => {
    const LEASE_MS = 400;
    const { db, dir, log, marker, peer } = await stallingServers("forkpoint-pg-alike-", LEASE_MS);
    const { s, cp, track } = await sessionWithCalls(peer, dir, 3);

    // The mover has this process's pid (and so its start time): it stalls after its first undo, past its lease.
    const mover = child(
      "tests/fixtures/pg-stalled-move.ts",
      [db, s.id, "u", "rollback", cp.id, log, String(LEASE_MS), "3000", marker],
      { SAME_PID: String(process.pid) },
      ["tests/fixtures/same-pid.ts"],
    );
    expect(ids((await takeOverStalled(peer, marker, mover)).undone)).toEqual(ids(track).reverse());

    const { code, out, err } = await mover.done;
    expect(code, err).toBe(0);
    expect(JSON.parse(out) as unknown).toEqual({ error: "MOVE_TAKEN_OVER" });
    // Each call undone once: the first by the mover, the others by the server that took the move over.
    const undos = undone(log).map((c) => c.invocationId);
    expect(undos).toEqual(ids(track).reverse());
    expect((await peer.verify()).ok).toBe(true);
  });
});

describe.skipIf(!url)("a move of this server's that failed on a lost connection", () => {
  /**
   * A session whose next rollback loses the database midway: its `outage` tool's undo takes the database away, then
   * returns (or, `undoFails`, throws). The rollback is made with `requestId` when given. With `replay`, the session is
   * rolled back first, and the move that loses the database is the switch back to `root`, in the outage's replay.
   */
  async function interruptedMove(prefix: string, o: { requestId?: string; undoFails?: boolean; replay?: boolean } = {}) {
    const dir = makeTempDir(prefix);
    cleanup.push(() => removeDir(dir));
    const db = await freshPgDatabase();
    const name = new URL(db).pathname.slice(1);
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    const allow = (yes: boolean) => admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS ${yes}`);
    cleanup.push(async () => {
      await allow(true);
      await admin.end();
    });
    // Every connection to the database ended, no new one accepted.
    const takeAway = async () => {
      await allow(false);
      await admin.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1`, [name]);
    };
    // The results its undos were given.
    const undoneWith: unknown[] = [];
    const outage = defineTool<Record<string, never>, { replay: boolean }>({
      name: "outage",
      run: async (_args, ctx) => {
        if (o.replay && ctx.replay) await takeAway();
        return { replay: ctx.replay };
      },
      undo: async ({ result }) => {
        undoneWith.push(result);
        if (o.replay) return;
        await takeAway();
        if (o.undoFails) throw new Error("the outage's undo failed");
      },
    });
    const fp = openForkpoint({ postgres: db, leaseMs: 600_000, recover: false, tools: [writeFileTool(), outage] });
    cleanup.push(() => fp.close());
    const s = await fp.createSession({ userId: "u" });
    const root = (await s.info()).currentBranchId;
    const cp = await s.checkpoint({ name: "before" });
    const file = path.join(dir, "a.txt");
    await s.invoke("write_file", { path: file, text: "a" });
    await s.invoke("outage", {});
    const track = await s.toolTrack();
    if (o.replay) await s.rollback(cp.id);

    const options = o.requestId === undefined ? {} : { requestId: o.requestId };
    await expect(o.replay ? s.switchBranch(root, options) : s.rollback(cp.id, options)).rejects.toMatchObject({
      name: "DatabaseError",
      code: "CANNOT_CONNECT",
    });
    // A new connection is refused while the database takes none (SQLSTATE 55000): as unreachable.
    await expect(s.history()).rejects.toMatchObject({ name: "DatabaseError", code: "CANNOT_CONNECT" });
    return { db, fp, s, root, cp, dir, file, allow, track, undoneWith, tools: [writeFileTool(), outage] };
  }

  it("is this server's to finish at once: recover() resumes it without waiting out its own lease", async () => {
    const { fp, s, file, allow, track } = await interruptedMove("forkpoint-pg-own-");
    await allow(true);
    const report = await fp.recover();
    expect(report.waiting).toEqual([]);
    expect(report.resumed).toHaveLength(1);
    // The outage's undo ended before its record was lost: this handle ran it, so it records it as it ended.
    expect({ undone: ids(report.resumed[0]!.undone), unknown: report.resumed[0]!.unknown }).toEqual({
      undone: ids(track).reverse(),
      unknown: [],
    });
    expect(fs.existsSync(file)).toBe(false);
    expect((await s.info()).currentBranchId).toBe(report.resumed[0]!.branch.id);
    expect((await fp.verify()).ok).toBe(true);
  });

  it("is resumed by the handle's next move once the database is back: no MOVE_IN_PROGRESS, no recover() call", async () => {
    const { fp, s, cp, file, allow } = await interruptedMove("forkpoint-pg-own-move-");
    await allow(true);
    // The same rollback again: the interrupted one is finished first (its undo of write_file runs once), then this
    // one finds the session already there.
    const moved = await s.rollback(cp.id);
    expect(fs.existsSync(file)).toBe(false);
    expect((await s.info()).currentBranchId).toBe(moved.branch.id);
    expect((await s.toolTrack()).map((t) => t.tool)).toEqual([]);
    expect((await fp.recover()).resumed).toEqual([]);
    expect((await fp.verify()).ok).toBe(true);
  });

  // The outage's undo ran to the end before its record was lost with the connection: the process that ran it knows.
  it("reports the undo that ended before the connection went as undone, not unknown, when its handle resumes it", async () => {
    const { fp, s, cp, file, allow, track } = await interruptedMove("forkpoint-pg-own-done-", { requestId: "mv1" });
    const seen: string[] = [];
    fp.on("undo", (t) => void seen.push(t.id));
    await allow(true);
    const root = (await s.info()).currentBranchId;
    // The retry of the request finishes the move: both calls undone (each once), none unknown.
    const moved = await s.rollback(cp.id, { requestId: "mv1" });
    expect({ undone: ids(moved.undone), unknown: ids(moved.unknown) }).toEqual({ undone: ids(track).reverse(), unknown: [] });
    expect(fs.existsSync(file)).toBe(false);
    expect(await s.toolTrack()).toEqual([]);
    // The undo recorded late is heard as the others are (before it, the first attempt's "undo" events were none).
    expect(seen).toEqual(ids(track).reverse());
    // Nothing is left for anyone to resolve; the way back replays both.
    expect(await fp.recover()).toMatchObject({ resumed: [], waiting: [], failed: [], unknown: [] });
    const back = await s.plan({ branchId: root });
    expect({ replayed: ids(back.replayed), unknown: ids(back.unknown) }).toEqual({ replayed: ids(track), unknown: [] });
    expect((await fp.verify()).ok).toBe(true);
  });

  it("reports the replay that ended before the connection went as replayed, with its result, when its handle resumes it", async () => {
    const { fp, s, root, cp, file, allow, track, undoneWith } = await interruptedMove("forkpoint-pg-own-replay-", {
      requestId: "sw1",
      replay: true,
    });
    await allow(true);
    const moved = await s.switchBranch(root, { requestId: "sw1" });
    expect({ replayed: ids(moved.replayed), unknown: ids(moved.unknown) }).toEqual({ replayed: ids(track), unknown: [] });
    expect(fs.readFileSync(file, "utf8")).toBe("a");
    expect((await s.toolTrack()).map((t) => [t.tool, t.applied])).toEqual([
      ["write_file", true],
      ["outage", true],
    ]);
    expect((await fp.recover()).unknown).toEqual([]);
    // The replay's result was recorded: the next undo of the call is given it, not the first run's.
    await s.rollback(cp.id);
    expect(undoneWith).toEqual([{ replay: false }, { replay: true }]);
    expect((await fp.verify()).ok).toBe(true);
  });

  it("reports the undo that failed before the connection went as failed, not unknown, when its handle resumes it", async () => {
    const { fp, s, cp, file, allow, track } = await interruptedMove("forkpoint-pg-own-failed-", { requestId: "mv1", undoFails: true });
    await allow(true);
    // Under the stop policy the retry stops there, as the first attempt would have: the call stays applied.
    await expect(s.rollback(cp.id, { requestId: "mv1" })).rejects.toMatchObject({
      code: "UNDO_FAILED",
      invocationId: track[1]!.id,
      message: expect.stringContaining("the outage's undo failed") as unknown,
    });
    expect(fs.readFileSync(file, "utf8")).toBe("a");
    expect((await s.toolTrack()).map((t) => [t.tool, t.applied])).toEqual([
      ["write_file", true],
      ["outage", true],
    ]);
    expect((await fp.recover()).unknown).toEqual([]);
    expect((await fp.verify()).ok).toBe(true);
  });

  // Any handle of this process resumes the move at once (the process owns it): each knows how the step ended, so a
  // sibling's write does not turn an undo that ran into an unknown one (whose effect a later move would leave out).
  it("reports the undo as undone when another handle of this process takes the move over", async () => {
    const { db, s, cp, file, allow, track, tools } = await interruptedMove("forkpoint-pg-other-", { requestId: "mv1" });
    await allow(true);
    await using other = openForkpoint({ postgres: db, leaseMs: 600_000, recover: false, tools });
    const report = await other.recover();
    expect(report.resumed).toHaveLength(1);
    const resumed = report.resumed[0]!;
    expect({ undone: ids(resumed.undone), unknown: ids(resumed.unknown) }).toEqual({ undone: ids(track).reverse(), unknown: [] });
    expect(fs.existsSync(file)).toBe(false);
    expect((await other.recover()).unknown).toEqual([]);
    // The handle that ran it answers its retry as the move ended.
    const retried = await s.rollback(cp.id, { requestId: "mv1" });
    expect({ undone: ids(retried.undone), unknown: ids(retried.unknown) }).toEqual({ undone: ids(track).reverse(), unknown: [] });
    expect(await s.toolTrack()).toEqual([]);
  });

  it("is resumed by the handle's next tool call once the database is back, which then runs on the moved session", async () => {
    const { fp, s, dir, file, allow } = await interruptedMove("forkpoint-pg-own-call-");
    await allow(true);
    const next = path.join(dir, "b.txt");
    await s.invoke("write_file", { path: next, text: "b" });
    expect(fs.existsSync(file)).toBe(false);
    expect(fs.readFileSync(next, "utf8")).toBe("b");
    expect((await s.toolTrack()).map((t) => t.args)).toEqual([{ path: next, text: "b" }]);
    expect((await fp.verify()).ok).toBe(true);
  });
});
