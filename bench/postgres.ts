// The PostgreSQL part of the bench, run from the parent (bench/run.ts): one real server for the run (the tests'
// fixture: initdb into a temp dir, loopback only, a random port, run as `nobody` under root), a fresh database per
// job, the jobs in child processes (pg-chat.ts, pg-writers.ts), sizes and row counts measured here, the server
// stopped at the end, also on failure or on SIGINT / SIGTERM.
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import pg from "pg";
import { startPostgres, type PostgresServer } from "../tests/fixtures/postgres-server.js";
import type { Job } from "./child.js";
import type { PgChatFigures } from "./pg-chat.js";
import type { PgVerifyResult, PgWriterResult } from "./pg-writers.js";
import type { Plan, PgSystem } from "./plan.js";
import { median, now, percentile } from "./util.js";

export interface PgChatAgg extends PgChatFigures {
  runs: number;
  peakRssMB: number;
}
export interface PgWritersRun {
  turns: number;
  spanMs: number;
  turnsPerSec: number;
  p50TurnMs: number;
  p99TurnMs: number;
  meanTurnMs: number;
  maxTurnMs: number;
  /** CPU time per turn (ms): the writer processes' own, and the server's (every postgres process, from /proc; null off Linux). */
  clientCpuMsPerTurn: number;
  serverCpuMsPerTurn: number | null;
  /** Rows in the database after the run (SQL), and every conversation read back through the system's API. */
  stored: Record<string, number>;
  readBack: PgVerifyResult;
  /** Whether the stored rows and the read-back counts are exactly what the writers wrote. */
  complete: boolean;
}
export interface PgWritersAgg {
  processes: number;
  sessions: number;
  turns: number;
  runs: PgWritersRun[];
  /** Medians across runs. */
  turnsPerSec: number;
  p50TurnMs: number;
  p99TurnMs: number;
  meanTurnMs: number;
  clientCpuMsPerTurn: number;
  serverCpuMsPerTurn: number | null;
  complete: boolean;
}
export interface PgResults {
  server: { version: string; settings: Record<string, string> };
  /** The machine's 1-minute load average when the part started and ended (other work on it skews every figure). */
  loadavg: { start: number; end: number };
  /** pg_database_size of a fresh, empty database: subtracted from each job's. */
  emptyDbBytes: number;
  chat: Record<PgSystem, Record<number, PgChatAgg>>;
  /** Chat sizes PostgresSaver was not run at (its put rewrites the whole list: quadratic). */
  peerSkipped: number[];
  writers: Partial<Record<PgSystem, PgWritersAgg>>;
  /** The database at `plan.wordsSize` turns when the messages are distinct words instead of the filler (one run each). */
  wordsSize: Partial<Record<PgSystem, { n: number; dbBytes: number; tablesBytes: number }>>;
}

interface Running<T> {
  pid: number;
  /** Resolves when a barrier job says it is ready; rejects if the process ends first. */
  ready: Promise<void>;
  go(): void;
  done: Promise<{ result: T; rssMB: number }>;
  kill(): void;
}

/** One job in a fresh Node process on the compiled JavaScript (as run.ts's `child`, but not blocking the parent). */
function startChild<T>(build: string, root: string, job: Job): Running<T> {
  const p = spawn(process.execPath, [join(build, "bench/child.js"), JSON.stringify(job)], {
    cwd: root,
    stdio: ["pipe", "pipe", "inherit"],
  });
  let out = "";
  let onReady: () => void = () => undefined;
  let onNotReady: (e: Error) => void = () => undefined;
  const ready = new Promise<void>((resolve, reject) => ((onReady = resolve), (onNotReady = reject)));
  ready.catch(() => undefined); // a job that is not a barrier job never resolves it
  p.stdout.setEncoding("utf8");
  p.stdout.on("data", (d: string) => {
    out += d;
    if (out.includes('{"ready":true}')) onReady();
  });
  const label = `${job.kind} ${job.system}${job.writer === undefined ? "" : ` writer ${job.writer}`}`;
  const done = new Promise<{ result: T; rssMB: number }>((resolve, reject) => {
    p.on("error", reject);
    p.on("close", (code, signal) => {
      const line = out.trim().split("\n").pop() ?? "";
      let msg: { ok?: boolean; result?: T; maxRssMB?: number; error?: string } = {};
      try {
        msg = JSON.parse(line);
      } catch {
        // handled below
      }
      const fail = (e: Error) => (onNotReady(e), reject(e));
      if (msg.ok === true) resolve({ result: msg.result!, rssMB: msg.maxRssMB! });
      else if (msg.ok === false) fail(new Error(`${label}: ${msg.error}`));
      else fail(new Error(`${label}: child exited with ${code ?? signal} and no result`));
    });
  });
  done.catch(() => undefined); // observed by whoever awaits it; a writer killed after another failed is not unhandled
  return {
    pid: p.pid!,
    ready,
    go: () => p.stdin.end("go\n"),
    done,
    kill: () => void (p.exitCode === null && p.signalCode === null && p.kill("SIGKILL")),
  };
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => undefined);
  }
}

const dbUrl = (serverUrl: string, name: string) => {
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  return u.toString();
};

/** Every user table's size with its indexes and TOAST: the system's own tables (each job has its database). */
const TABLES_BYTES = `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS b FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relkind IN ('r', 'p', 'm') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg_toast%'`;

/** Rows each system stored (the SQL view; the API view is the verify job's). */
const COUNTS: Record<PgSystem, string> = {
  pg: `SELECT (SELECT count(*) FROM sessions) AS sessions, (SELECT count(*) FROM entries WHERE kind = 'message') AS messages,
    (SELECT count(*) FROM checkpoints) AS checkpoints`,
  pgpeer: `SELECT (SELECT count(DISTINCT thread_id) FROM checkpoints) AS threads, (SELECT count(*) FROM checkpoints) AS checkpoints,
    (SELECT count(*) FROM checkpoint_blobs WHERE channel = 'messages') AS "message lists"`,
};
/** What COUNTS must find after `conversations` conversations of `turns` turns each. */
const EXPECTED: Record<PgSystem, (conversations: number, turns: number) => Record<string, number>> = {
  pg: (c, t) => ({ sessions: c, messages: 2 * c * t, checkpoints: c * t }),
  pgpeer: (c, t) => ({ threads: c, checkpoints: c * t, "message lists": c * t }),
};

let clockTicks: number | undefined;
/**
 * CPU time (ms) the server has used so far: its postmaster with every child it has reaped (a backend's time joins the
 * postmaster's once the connection ends) and every child still running. Linux only (/proc); null elsewhere.
 */
function serverCpuMs(port: number): number | null {
  try {
    clockTicks ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    const stats = new Map<number, string[]>();
    let postmaster: number | undefined;
    for (const d of readdirSync("/proc")) {
      if (!/^\d+$/.test(d)) continue;
      try {
        const stat = readFileSync(`/proc/${d}/stat`, "utf8");
        stats.set(Number(d), stat.slice(stat.lastIndexOf(")") + 2).split(" "));
        const argv = readFileSync(`/proc/${d}/cmdline`, "utf8").split("\0");
        if (argv[0]?.endsWith("/postgres") && argv[argv.indexOf("-p") + 1] === String(port)) postmaster = Number(d);
      } catch {
        // the process ended meanwhile
      }
    }
    if (postmaster === undefined) return null;
    const ticks = (f: string[], from: number, to: number) => f.slice(from, to).reduce((a, x) => a + Number(x), 0);
    let total = ticks(stats.get(postmaster)!, 11, 15); // utime, stime, cutime, cstime
    for (const f of stats.values()) if (Number(f[1]) === postmaster) total += ticks(f, 11, 13);
    return (total / clockTicks) * 1000;
  } catch {
    return null;
  }
}

export interface PgPartOptions {
  plan: Plan["postgres"];
  systems: PgSystem[];
  build: string;
  root: string;
  log(s: string): void;
  errors: string[];
}

export async function runPostgresPart(o: PgPartOptions): Promise<PgResults | null> {
  const { plan, systems, build, root, log, errors } = o;
  let stopping = false; // a signal came: no more jobs
  const attempt = async (label: string, fn: () => Promise<void>) => {
    if (stopping) return;
    try {
      await fn();
    } catch (e) {
      if (stopping) return;
      errors.push(`${label}: ${(e as Error).message}`);
      log(`${label}: FAILED (${(e as Error).message.split("\n")[0]})`);
    }
  };
  let server: PostgresServer;
  const loadStart = os.loadavg()[0]!;
  const t0 = now();
  try {
    server = await startPostgres();
  } catch (e) {
    errors.push(`postgres: the server did not start: ${(e as Error).message}`);
    log(`postgres: the server did not start (${(e as Error).message.split("\n")[0]})`);
    return null;
  }
  log(`postgres: server up in ${(now() - t0).toFixed(0)} ms`);
  const running = new Set<Running<unknown>>();
  const onSignal = (signal: NodeJS.Signals) => {
    log(`postgres: ${signal}, stopping the jobs and the server`);
    stopping = true;
    for (const c of running) c.kill();
    void server.stop().finally(() => process.exit(signal === "SIGINT" ? 130 : 143));
  };
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);
  try {
    const admin = (fn: (c: pg.Client) => Promise<void>) => withClient(server.url, fn);
    const fresh = async (): Promise<{ url: string; drop(): Promise<void> }> => {
      const name = `bench_${randomBytes(6).toString("hex")}`;
      await admin(async (c) => void (await c.query(`CREATE DATABASE ${name}`)));
      return {
        url: dbUrl(server.url, name),
        drop: () => admin(async (c) => void (await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))),
      };
    };
    const info = await withClient(server.url, async (c) => {
      const settings: Record<string, string> = {};
      for (const k of ["fsync", "synchronous_commit", "full_page_writes", "shared_buffers", "default_toast_compression"])
        settings[k] = (await c.query<Record<string, string>>(`SHOW ${k}`)).rows[0]![k]!;
      return { version: (await c.query<{ server_version: string }>("SHOW server_version")).rows[0]!.server_version, settings };
    });
    const sizeOf = (url: string) =>
      withClient(url, async (c) => {
        await c.query("CHECKPOINT"); // every dirty page on disk first (the sizes are the files')
        const db = (await c.query<{ b: string }>("SELECT pg_database_size(current_database())::bigint AS b")).rows[0]!.b;
        return { dbBytes: Number(db), tablesBytes: Number((await c.query<{ b: string }>(TABLES_BYTES)).rows[0]!.b) };
      });
    // PostgresSaver's message lists as serialized and as stored (TOAST compresses a value over 2 kB; pglz here).
    const listBytesOf = (url: string) =>
      withClient(url, async (c) => {
        const row = (
          await c.query<{ raw: string; stored: string }>(
            "SELECT coalesce(sum(octet_length(blob)), 0)::bigint AS raw, coalesce(sum(pg_column_size(blob)), 0)::bigint AS stored FROM checkpoint_blobs",
          )
        ).rows[0]!;
        return { listsRawBytes: Number(row.raw), listsStoredBytes: Number(row.stored) };
      });
    const countsOf = (url: string, system: PgSystem) =>
      withClient(url, async (c) =>
        Object.fromEntries(Object.entries((await c.query(COUNTS[system])).rows[0]!).map(([k, v]) => [k, Number(v)])),
      );
    const empty = await fresh();
    const emptyDbBytes = (await sizeOf(empty.url)).dbBytes;
    await empty.drop();
    const results: PgResults = {
      server: info,
      loadavg: { start: loadStart, end: NaN },
      emptyDbBytes,
      chat: { pg: {}, pgpeer: {} },
      peerSkipped: plan.peerSkipped,
      writers: {},
      wordsSize: {},
    };
    const port = Number(new URL(server.url).port);
    const run = async <T>(job: Job): Promise<{ result: T; rssMB: number }> => {
      const c = startChild<T>(build, root, job);
      running.add(c);
      try {
        return await c.done;
      } finally {
        running.delete(c);
      }
    };

    // Chat: at each N the two systems' runs alternate, each on a database of its own.
    for (const n of [...new Set(plan.chat.map((c) => c.n))]) {
      const here = plan.chat.filter((c) => c.n === n && systems.includes(c.system));
      const runs = new Map<PgSystem, { fig: PgChatFigures; rssMB: number }[]>(here.map((c) => [c.system, []]));
      for (let i = 0; i < Math.max(0, ...here.map((c) => c.runs)); i++) {
        for (const { system, runs: total } of here) {
          if (i >= total || !runs.has(system)) continue;
          await attempt(`postgres chat ${system} N=${n}`, async () => {
            const db = await fresh();
            try {
              const r = await run<PgChatFigures>({ kind: "pgchat", system, n, url: db.url });
              const size = await sizeOf(db.url);
              const counts = await countsOf(db.url, system);
              const want = EXPECTED[system](1, n);
              if (Object.entries(want).some(([k, v]) => counts[k] !== v))
                throw new Error(`stored ${JSON.stringify(counts)}, expected ${JSON.stringify(want)}`);
              const fig: PgChatFigures = { ...r.result, dbBytes: size.dbBytes - emptyDbBytes, tablesBytes: size.tablesBytes };
              if (system === "pgpeer") Object.assign(fig, await listBytesOf(db.url));
              runs.get(system)!.push({ fig, rssMB: r.rssMB });
              log(
                `pg chat ${system.padEnd(6)} N=${String(n).padEnd(5)} run ${i + 1}/${total}: total ${fig.totalMs.toFixed(0)} ms, median turn ${fig.medianTurnMs.toFixed(3)} ms, db +${(fig.dbBytes! / 1048576).toFixed(2)} MB`,
              );
            } catch (e) {
              runs.delete(system); // one failure drops the system at this N
              throw e;
            } finally {
              await db.drop();
            }
          });
        }
      }
      for (const [system, rs] of runs) if (rs.length) results.chat[system][n] = aggregatePgChat(rs);
    }

    // The database size again with messages of distinct words: the filler repeats, and TOAST compresses a whole list of it.
    for (const system of (["pgpeer", "pg"] as const).filter((s) => systems.includes(s))) {
      const n = plan.wordsSize;
      await attempt(`postgres size with distinct words ${system} N=${n}`, async () => {
        const db = await fresh();
        try {
          await run<PgChatFigures>({ kind: "pgchat", system, n, url: db.url, content: "words" });
          const size = await sizeOf(db.url);
          results.wordsSize[system] = { n, dbBytes: size.dbBytes - emptyDbBytes, tablesBytes: size.tablesBytes };
          log(`pg size ${system.padEnd(6)} N=${n}, distinct words: db +${((size.dbBytes - emptyDbBytes) / 1048576).toFixed(2)} MB`);
        } finally {
          await db.drop();
        }
      });
    }

    // Many writers: `processes` processes on one database, started together; then everything read back.
    const w = plan.writers;
    for (let i = 0; i < w.runs; i++) {
      // Whichever system runs second meets the first one's dirty pages being written out: the order alternates by run,
      // and each run starts after a CHECKPOINT.
      const order = i % 2 === 0 ? (["pgpeer", "pg"] as const) : (["pg", "pgpeer"] as const);
      for (const system of order.filter((s) => systems.includes(s))) {
        await attempt(`postgres writers ${system}`, async () => {
          const db = await fresh();
          const kids: Running<PgWriterResult>[] = [];
          try {
            await run({ kind: "pgprepare", system, url: db.url });
            await admin(async (c) => void (await c.query("CHECKPOINT")));
            for (let k = 0; k < w.processes; k++) {
              const job: Job = { kind: "pgwriter", system, url: db.url, writer: k, sessions: w.sessions, turns: w.turns, barrier: true };
              kids.push(startChild<PgWriterResult>(build, root, job));
            }
            kids.forEach((k) => running.add(k));
            await Promise.all(kids.map((k) => k.ready));
            const cpu0 = serverCpuMs(port);
            kids.forEach((k) => k.go());
            const rs = (await Promise.all(kids.map((k) => k.done))).map((r) => r.result);
            const cpu1 = serverCpuMs(port);
            const all = rs.flatMap((r) => r.turnMs);
            const spanMs = Math.max(...rs.map((r) => r.endedAt)) - Math.min(...rs.map((r) => r.startedAt));
            const conversations = rs.flatMap((r) => r.conversations);
            const stored = await countsOf(db.url, system);
            const readBack = (await run<PgVerifyResult>({ kind: "pgverify", system, url: db.url, conversations, turns: w.turns })).result;
            const want = EXPECTED[system](w.processes * w.sessions, w.turns);
            const complete =
              Object.entries(want).every(([k, v]) => stored[k] === v) &&
              readBack.short === 0 &&
              readBack.messages === 2 * w.processes * w.sessions * w.turns;
            const one: PgWritersRun = {
              turns: all.length,
              spanMs,
              turnsPerSec: (all.length / spanMs) * 1000,
              p50TurnMs: median(all),
              p99TurnMs: percentile(all, 99),
              meanTurnMs: all.reduce((a, b) => a + b, 0) / all.length,
              maxTurnMs: Math.max(...all),
              clientCpuMsPerTurn: rs.reduce((a, r) => a + r.cpuMs, 0) / all.length,
              // From "go" to every writer's exit: the pools' ends are in it, a few ms against seconds.
              serverCpuMsPerTurn: cpu0 == null || cpu1 == null ? null : (cpu1 - cpu0) / all.length,
              stored,
              readBack,
              complete,
            };
            const agg = (results.writers[system] ??= {
              processes: w.processes,
              sessions: w.sessions,
              turns: w.turns,
              runs: [],
              turnsPerSec: NaN,
              p50TurnMs: NaN,
              p99TurnMs: NaN,
              meanTurnMs: NaN,
              clientCpuMsPerTurn: NaN,
              serverCpuMsPerTurn: null,
              complete: true,
            });
            agg.runs.push(one);
            for (const k of ["turnsPerSec", "p50TurnMs", "p99TurnMs", "meanTurnMs", "clientCpuMsPerTurn"] as const)
              agg[k] = median(agg.runs.map((r) => r[k]));
            const server = agg.runs.map((r) => r.serverCpuMsPerTurn).filter((x): x is number => x != null);
            agg.serverCpuMsPerTurn = server.length ? median(server) : null;
            agg.complete = agg.runs.every((r) => r.complete);
            log(
              `pg writers ${system.padEnd(6)} run ${i + 1}/${w.runs}: ${one.turns} turns in ${spanMs.toFixed(0)} ms, ${one.turnsPerSec.toFixed(0)} turns/s, p99 ${one.p99TurnMs.toFixed(2)} ms, ${complete ? "nothing lost" : `INCOMPLETE ${JSON.stringify({ stored, readBack })}`}`,
            );
          } finally {
            for (const k of kids) {
              k.kill(); // only if still running (a failure elsewhere): the others wait for a go that never comes
              running.delete(k);
            }
            await Promise.allSettled(kids.map((k) => k.done));
            await db.drop();
          }
        });
      }
    }
    results.loadavg.end = os.loadavg()[0]!;
    return results;
  } finally {
    for (const c of running) c.kill();
    process.removeListener("SIGINT", onSignal);
    process.removeListener("SIGTERM", onSignal);
    await server.stop();
    log("postgres: server stopped");
  }
}

/** Median of each figure across runs; peak RSS the largest. */
function aggregatePgChat(runs: { fig: PgChatFigures; rssMB: number }[]): PgChatAgg {
  const pick = (k: keyof PgChatFigures) => median(runs.map((r) => r.fig[k] as number).filter((x) => Number.isFinite(x)));
  const agg = { ...runs[0]!.fig, runs: runs.length, peakRssMB: Math.max(...runs.map((r) => r.rssMB)) };
  for (const k of [
    "totalMs",
    "turnsPerSec",
    "medianTurnMs",
    "p99TurnMs",
    "meanTurnMs",
    "firstMs",
    "lastMs",
    "readLatestMs",
    "clientCpuMsPerTurn",
    "dbBytes",
    "tablesBytes",
    "listsRawBytes",
    "listsStoredBytes",
  ] as const)
    if (runs.some((r) => r.fig[k] !== undefined)) agg[k] = pick(k);
  agg.turnsRssMB = Math.max(...runs.map((r) => r.fig.turnsRssMB));
  return agg;
}
