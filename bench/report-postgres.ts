// The PostgreSQL part's tables and targets (issue 18): forkpoint on PostgreSQL against LangGraph's PostgresSaver.
import type { PgChatAgg, PgResults, PgWritersAgg } from "./postgres.js";
import type { Target } from "./report.js";

const ms = (x: number | null | undefined) =>
  x == null || !Number.isFinite(x) ? "n/a" : x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(2) : x.toFixed(3);
const mb = (x: number | null | undefined) => (x == null || !Number.isFinite(x) ? "n/a" : (x / 1048576).toFixed(x < 10485760 ? 2 : 1));
const rate = (x: number | null | undefined) => (x == null || !Number.isFinite(x) ? "n/a" : x.toFixed(0));
const int = (x: number) => x.toLocaleString("en-US");
const pad = (s: string, w: number) => s.padStart(w);
/** How far forkpoint is ahead: > 1 means better, for a time (peer / fp) or for a rate (fp / peer). */
const ahead = (peer: number | null | undefined, fp: number | null | undefined, higherIsBetter = false) => {
  if (peer == null || fp == null || !Number.isFinite(peer) || !Number.isFinite(fp) || peer === 0 || fp === 0) return null;
  return higherIsBetter ? fp / peer : peer / fp;
};
const times = (q: number | null) => (q == null ? "" : `${q.toFixed(q >= 10 ? 0 : 2)}×`);

type Row = [label: string, get: (a: PgChatAgg) => number, fmt: (x: number) => string, higherIsBetter: boolean];
const CHAT_ROWS: Row[] = [
  ["turn, median (ms)", (a) => a.medianTurnMs, ms, false],
  ["turn, p99 (ms)", (a) => a.p99TurnMs, ms, false],
  ["turn, mean (ms)", (a) => a.meanTurnMs, ms, false],
  ["turn, first 10% (ms)", (a) => a.firstMs, ms, false],
  ["turn, last 10% (ms)", (a) => a.lastMs, ms, false],
  ["throughput (turns/s)", (a) => a.turnsPerSec, rate, true],
  ["total (ms)", (a) => a.totalMs, ms, false],
  ["read latest (ms)", (a) => a.readLatestMs, ms, false],
  ["client CPU/turn (ms)", (a) => a.clientCpuMsPerTurn, ms, false],
  ["db size (MB)", (a) => a.dbBytes!, mb, false],
  ["  its tables (MB)", (a) => a.tablesBytes!, mb, false],
  ["peak RSS, turns (MB)", (a) => a.turnsRssMB * 1048576, mb, false],
  ["peak RSS, run (MB)", (a) => a.peakRssMB * 1048576, mb, false],
];

export function formatPgTables(r: PgResults | null | undefined): string {
  if (!r) return "";
  const out: string[] = [];
  const s = r.server.settings;
  out.push(
    "",
    `PostgreSQL ${r.server.version} (the tests' throwaway server, loopback TCP: fsync=${s.fsync}, synchronous_commit=${s.synchronous_commit}, ` +
      `full_page_writes=${s.full_page_writes}, shared_buffers=${s.shared_buffers}, TOAST compression ${s.default_toast_compression}); a fresh database per job`,
    `  "fp ahead" = PostgresSaver / forkpoint for times and sizes, forkpoint / PostgresSaver for throughput: above 1× forkpoint is ahead.`,
    `  db size = pg_database_size of the job's database after CHECKPOINT minus an empty fresh database's (${mb(r.emptyDbBytes)} MB);`,
    `  its tables = the sum of pg_total_relation_size (heap, indexes, TOAST) of the system's tables.`,
    `  Load average (1 min) of the machine: ${r.loadavg.start.toFixed(2)} at the start of this part, ${r.loadavg.end.toFixed(2)} at its end.`,
  );
  const sizes = [...new Set(Object.values(r.chat).flatMap((m) => Object.keys(m).map(Number)))].sort((a, b) => a - b);
  for (const n of sizes) {
    const peer = r.chat.pgpeer[n],
      fp = r.chat.pg[n];
    const runs = [peer, fp].map((a) => (a ? String(a.runs) : "-")).join("/");
    out.push(
      "",
      `PostgreSQL chat, N = ${int(n)} turns, one conversation (median of ${runs} run(s): PostgresSaver/forkpoint)`,
      `  ${"figure".padEnd(22)}${pad("PostgresSaver", 15)}${pad("forkpoint", 12)}${pad("fp ahead", 10)}`,
    );
    if (!peer && r.peerSkipped.includes(n))
      out.push("  (PostgresSaver not run at this size: each put rewrites the whole message list, so its cost grows quadratically)");
    for (const [label, get, fmt, hib] of CHAT_ROWS) {
      const p = peer ? get(peer) : null,
        f = fp ? get(fp) : null;
      out.push(
        `  ${label.padEnd(22)}${pad(p == null ? "-" : fmt(p), 15)}${pad(f == null ? "-" : fmt(f), 12)}${pad(times(ahead(p, f, hib)), 10)}`,
      );
    }
    if (peer?.listsRawBytes && peer.listsStoredBytes)
      out.push(
        `  note: PostgresSaver's message lists: ${mb(peer.listsRawBytes)} MB serialized, ${mb(peer.listsStoredBytes)} MB stored ` +
          `(TOAST ${s.default_toast_compression}: ${times(peer.listsRawBytes / peer.listsStoredBytes)}); every message here is "<role> turn <i>: " and the same filler, cut at 200 bytes`,
      );
  }
  const zp = r.wordsSize?.pgpeer,
    zf = r.wordsSize?.pg;
  if (zp || zf) {
    out.push(
      "",
      `PostgreSQL, the database at N = ${int((zp ?? zf)!.n)} turns with messages of distinct words (bench/util.ts wordsContent: a seeded ` +
        `draw from 170 words, no repeated filler; one run each)`,
      `  ${"figure".padEnd(22)}${pad("PostgresSaver", 15)}${pad("forkpoint", 12)}${pad("fp ahead", 10)}`,
    );
    for (const [label, get] of [
      ["db size (MB)", (a: { dbBytes: number }) => a.dbBytes],
      ["  its tables (MB)", (a: { tablesBytes: number }) => a.tablesBytes],
    ] as const) {
      const p = zp ? get(zp) : null,
        f = zf ? get(zf) : null;
      out.push(
        `  ${label.padEnd(22)}${pad(p == null ? "-" : mb(p), 15)}${pad(f == null ? "-" : mb(f), 12)}${pad(times(ahead(p, f, false)), 10)}`,
      );
    }
  }
  const wp = r.writers.pgpeer,
    wf = r.writers.pg;
  const any = wp ?? wf;
  if (any) {
    const total = any.processes * any.sessions * any.turns;
    out.push(
      "",
      `PostgreSQL, many writers: ${any.processes} processes at once on one database, each ${any.sessions} conversations × ${any.turns} turns ` +
        `round-robin (${int(total)} turns in all; median of ${[wp, wf].map((a) => (a ? String(a.runs.length) : "-")).join("/")} run(s))`,
      `  ${"figure".padEnd(22)}${pad("PostgresSaver", 15)}${pad("forkpoint", 12)}${pad("fp ahead", 10)}`,
    );
    const rows: [string, (a: PgWritersAgg) => number | null, (x: number) => string, boolean][] = [
      ["throughput (turns/s)", (a) => a.turnsPerSec, rate, true],
      ["turn, p50 (ms)", (a) => a.p50TurnMs, ms, false],
      ["turn, p99 (ms)", (a) => a.p99TurnMs, ms, false],
      ["turn, mean (ms)", (a) => a.meanTurnMs, ms, false],
      ["wall time (ms)", (a) => median(a.runs.map((x) => x.spanMs)), ms, false],
      ["client CPU/turn (ms)", (a) => a.clientCpuMsPerTurn, ms, false],
      ["server CPU/turn (ms)", (a) => a.serverCpuMsPerTurn, ms, false],
    ];
    for (const [label, get, fmt, hib] of rows) {
      const p = wp ? get(wp) : null,
        f = wf ? get(wf) : null;
      out.push(
        `  ${label.padEnd(22)}${pad(p == null ? "-" : fmt(p), 15)}${pad(f == null ? "-" : fmt(f), 12)}${pad(times(ahead(p, f, hib)), 10)}`,
      );
    }
    out.push("  nothing lost? rows in the database after each run, then every conversation read back in a fresh process:");
    for (const [name, a, read] of [
      ["PostgresSaver", wp, "getTuple"],
      ["forkpoint", wf, "history()"],
    ] as const) {
      if (!a) continue;
      for (const [i, x] of a.runs.entries()) {
        const stored = Object.entries(x.stored)
          .map(([k, v]) => `${int(v)} ${k}`)
          .join(", ");
        out.push(
          `    ${name} run ${i + 1}: ${stored}; ${read} of ${int(x.readBack.conversations)} conversations: ${int(x.readBack.messages)} of ${int(2 * total)} messages, ` +
            `${x.readBack.short} short: ${x.complete ? "nothing lost" : "SOMETHING LOST"}`,
        );
      }
    }
  }
  return out.join("\n");
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** Issue 18's targets: forkpoint ahead of PostgresSaver on every figure, and its database ≥ 20× smaller at 1,000 turns. */
export function evaluatePgTargets(r: PgResults | null | undefined): Target[] {
  const t: Target[] = [];
  const add = (name: string, ok: boolean | null, detail: string) =>
    t.push({ name, status: ok === null ? "NOT MEASURED" : ok ? "MET" : "MISSED", detail });
  const sizes = r ? [...new Set(Object.keys(r.chat.pg).map(Number))].filter((n) => r.chat.pgpeer[n]).sort((a, b) => a - b) : [];
  const figures: { name: string; qs: { at: string; q: number | null }[] }[] = [];
  const chatFigure = (name: string, get: (a: PgChatAgg) => number, hib = false) =>
    figures.push({ name, qs: sizes.map((n) => ({ at: `N=${int(n)}`, q: ahead(get(r!.chat.pgpeer[n]!), get(r!.chat.pg[n]!), hib) })) });
  chatFigure("chat per-turn median", (a) => a.medianTurnMs);
  chatFigure("chat per-turn p99", (a) => a.p99TurnMs);
  chatFigure("chat throughput", (a) => a.turnsPerSec, true);
  chatFigure("read latest (restore(latest) vs getTuple())", (a) => a.readLatestMs);
  const wp = r?.writers.pgpeer,
    wf = r?.writers.pg;
  figures.push({
    name: "many writers throughput",
    qs: wp && wf ? [{ at: "8 processes", q: ahead(wp.turnsPerSec, wf.turnsPerSec, true) }] : [],
  });
  figures.push({ name: "many writers per-turn p99", qs: wp && wf ? [{ at: "8 processes", q: ahead(wp.p99TurnMs, wf.p99TurnMs) }] : [] });
  const verdict = (qs: { q: number | null }[]) => (qs.length === 0 || qs.some((x) => x.q == null) ? null : qs.every((x) => x.q! > 1));
  const detail = (qs: { at: string; q: number | null }[]) =>
    qs.length ? qs.map((x) => `${x.at}: ${x.q == null ? "n/a" : `${times(x.q)}${x.q > 1 ? "" : " (behind)"}`}`).join(", ") : "not run";
  const all = figures.map((f) => verdict(f.qs));
  const behind = figures.filter((_, i) => all[i] === false).map((f) => f.name);
  const unmeasured = figures.filter((_, i) => all[i] === null).map((f) => f.name);
  add(
    "PostgreSQL: forkpoint ahead of PostgresSaver on every figure",
    behind.length ? false : unmeasured.length ? null : true,
    [behind.length ? `behind on: ${behind.join(", ")}` : "", unmeasured.length ? `not measured: ${unmeasured.join(", ")}` : ""]
      .filter(Boolean)
      .join("; ") || "ahead on all of them",
  );
  for (const f of figures) add(`  ${f.name}: forkpoint ahead`, verdict(f.qs), `fp ahead by ${detail(f.qs)}`);
  const p = r?.chat.pgpeer[1000],
    f = r?.chat.pg[1000];
  const z = ahead(p?.dbBytes, f?.dbBytes),
    zt = ahead(p?.tablesBytes, f?.tablesBytes),
    words = ahead(r?.wordsSize?.pgpeer?.dbBytes, r?.wordsSize?.pg?.dbBytes);
  add(
    "PostgreSQL, N=1,000: forkpoint's database ≥20× smaller than PostgresSaver's",
    z == null ? null : z >= 20,
    z == null
      ? "N=1,000 not run on both"
      : `pg_database_size − empty: ${mb(p!.dbBytes)} MB / ${mb(f!.dbBytes)} MB = ${times(z)}; their tables alone: ${mb(p!.tablesBytes)} MB / ${mb(f!.tablesBytes)} MB = ${times(zt)}` +
          (words == null ? "" : ` (with messages of distinct words instead of the filler: ${times(words)}, not judged)`),
  );
  return t;
}

export function formatPgTargets(targets: Target[]): string {
  if (!targets.length) return "";
  return ["", "Targets (issue 18, PostgreSQL)", ...targets.map((x) => `  [${x.status.padEnd(12)}] ${x.name}: ${x.detail}`)].join("\n");
}
