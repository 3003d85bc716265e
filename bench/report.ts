// Aggregates runs into medians, prints the tables, and evaluates the targets of issue 4.
import type { PageFigures } from "./floor.js";
import type { GraphFigures } from "./graph-langgraph.js";
import type { RequestFigures, ToolFigures } from "./forkpoint.js";
import type { SqliteSystem, System } from "./plan.js";
import type { PgResults } from "./postgres.js";
import type { WorkspaceAgg } from "./report-workspace.js";
import { median, type ChatFigures } from "./util.js";

export interface ChatAgg extends ChatFigures {
  runs: number;
  peakRssMB: number;
}
/** baselineRssMB: peak RSS of a child that only starts Node (compiled JavaScript, no loader; included in every RSS figure). */
/** Medians across runs of each run's medians and ratio. */
export type RequestRuns = RequestFigures & { runs: number; ratios: number[] };

export interface Results {
  chat: Record<SqliteSystem, Record<number, ChatAgg>>;
  history: Partial<Record<System, { count: number; ms: number; peakRssMB: number }>>;
  pages: Partial<Record<System, PageFigures & { peakRssMB: number }>>;
  tools: (ToolFigures & { runs: number }) | null;
  /** A turn with a request id against one without (issue 31): medians across runs of each run's medians and ratio. */
  requests: (RequestRuns & { floor?: RequestRuns }) | null;
  /** forkpoint's chat with `walWorker: true`, by N (not a separate system: an option of the same engine). */
  walWorker: Record<number, ChatAgg>;
  /** A real LangGraph graph per checkpointer (no target: for LangGraph users), by invokes per thread. */
  graph: Record<number, Partial<Record<"peer" | "saver", GraphAgg>>>;
  baselineRssMB: number | null;
  /** The PostgreSQL part (issue 18): forkpoint on PostgreSQL and PostgresSaver; null when neither was selected. */
  postgres: PgResults | null;
  /** The workspace bench (issue 33), by tracked files. */
  workspace: Record<number, WorkspaceAgg>;
  errors: string[];
}
export interface GraphAgg extends GraphFigures {
  runs: number;
}
export interface Target {
  name: string;
  status: "MET" | "MISSED" | "NOT MEASURED";
  detail: string;
}

const CHAT_KEYS = [
  "totalMs",
  "firstMs",
  "lastMs",
  "meanTurnMs",
  "p99TurnMs",
  "dbBytes",
  "readLatestMs",
  "historyMs",
  "list10Ms",
  "rollbackMs",
  "rollbackColdMs",
  "editMs",
  "editColdMs",
  "writeTxMs",
  "rollbackFloorMs",
  "editFloorMs",
  "rollbackVsFloor",
  "editVsFloor",
] as const;

/** Median of each figure across runs (null when a figure was unavailable in every run). */
export function aggregateChat(runs: { fig: ChatFigures; rssMB: number }[]): ChatAgg {
  const first = runs[0]!.fig;
  const agg = {
    ...first,
    runs: runs.length,
    peakRssMB: Math.max(...runs.map((r) => r.rssMB)),
    turnsRssMB: Math.max(...runs.map((r) => r.fig.turnsRssMB)),
  } as ChatAgg;
  for (const k of CHAT_KEYS) {
    const xs = runs.map((r) => r.fig[k]).filter((x): x is number => typeof x === "number" && Number.isFinite(x));
    (agg as unknown as Record<string, number | null>)[k] = xs.length ? median(xs) : null;
  }
  agg.notes = [...new Set(runs.flatMap((r) => r.fig.notes))];
  return agg;
}

/** Median of each figure across runs; peak RSS is the largest. */
export function aggregateGraph(runs: GraphFigures[]): GraphAgg {
  const pick = (k: "totalMs" | "firstMs" | "lastMs" | "getStateMs") => median(runs.map((r) => r[k]));
  return {
    n: runs[0]!.n,
    runs: runs.length,
    totalMs: pick("totalMs"),
    firstMs: pick("firstMs"),
    lastMs: pick("lastMs"),
    getStateMs: pick("getStateMs"),
    peakRssMB: Math.max(...runs.map((r) => r.peakRssMB)),
  };
}

const ms = (x: number | null | undefined) =>
  x == null || !Number.isFinite(x) ? "n/a" : x >= 100 ? x.toFixed(0) : x >= 1 ? x.toFixed(2) : x.toFixed(3);
const mb = (x: number | null | undefined) => (x == null || !Number.isFinite(x) ? "n/a" : (x / 1048576).toFixed(x < 10485760 ? 2 : 1));
const ratio = (a: number | null | undefined, b: number | null | undefined) =>
  a == null || b == null || !Number.isFinite(a) || !Number.isFinite(b) || b === 0 ? "" : `${(a / b).toFixed(a / b >= 10 ? 0 : 2)}×`;
const pad = (s: string, w: number) => s.padStart(w);

export function formatTables(r: Results, peerSkipped: number[]): string {
  const out: string[] = [];
  const sizes = [...new Set(Object.values(r.chat).flatMap((m) => Object.keys(m).map(Number)))].sort((a, b) => a - b);
  const rows: [string, (a: ChatAgg) => number | null, (x: number | null) => string][] = [
    ["total (ms)", (a) => a.totalMs, ms],
    ["turn, first 10% (ms)", (a) => a.firstMs, ms],
    ["turn, last 10% (ms)", (a) => a.lastMs, ms],
    ["last / first 10%", (a) => a.lastMs / a.firstMs, (x) => (x == null ? "n/a" : x.toFixed(2))],
    ["turn, mean (ms)", (a) => a.meanTurnMs, ms],
    ["turn, p99 (ms)", (a) => a.p99TurnMs, ms],
    ["db size (MB)", (a) => a.dbBytes, mb],
    ["read latest cp (ms)", (a) => a.readLatestMs, ms],
    ["history (ms)", (a) => a.historyMs, ms],
    ["list 10 latest (ms)", (a) => a.list10Ms, ms],
    ["rollback middle (ms)", (a) => a.rollbackMs, ms],
    ["  first 21 calls (ms)", (a) => a.rollbackColdMs, ms],
    ["  floor write tx, right after (ms)", (a) => a.rollbackFloorMs, ms],
    ["edit middle (ms)", (a) => a.editMs, ms],
    ["  first 21 calls (ms)", (a) => a.editColdMs, ms],
    ["  floor write tx, right after (ms)", (a) => a.editFloorMs, ms],
    ["one write tx (ms)", (a) => a.writeTxMs, ms],
    ["peak RSS, turns (MB)", (a) => a.turnsRssMB * 1048576, mb],
    ["peak RSS, run (MB)", (a) => a.peakRssMB * 1048576, mb],
  ];
  for (const n of sizes) {
    const peer = r.chat.peer[n],
      saver = r.chat.saver?.[n],
      fp = r.chat.forkpoint[n],
      sql = r.chat.sql?.[n],
      floor = r.chat.floor[n];
    const runs = [peer, saver, fp, sql, floor].filter(Boolean).map((a) => a!.runs);
    out.push("", `Chat, N = ${n.toLocaleString("en-US")} turns (median of ${[...new Set(runs)].join("/")} run(s) per system)`);
    if (peerSkipped.includes(n)) {
      out.push(
        n <= 3000
          ? "  (peer not run at this size in quick mode)"
          : "  (peer skipped at this size: SqliteSaver rewrites the whole message list on every put, so its cost grows quadratically)",
      );
    }
    out.push(
      `  ${"figure".padEnd(22)}${pad("peer", 11)}${pad("fp saver", 11)}${pad("forkpoint", 11)}${pad("fp SQL", 11)}${pad("floor", 11)}` +
        `${pad("peer/svr", 9)}${pad("peer/fp", 9)}${pad("fp/SQL", 9)}${pad("fp/floor", 9)}`,
    );
    for (const [label, get, fmt] of rows) {
      const v = (a: ChatAgg | undefined) => (a ? get(a) : null);
      const [p, sv, f, q, l] = [v(peer), v(saver), v(fp), v(sql), v(floor)];
      const isRatio = label.startsWith("last /");
      const floorOnly = label.startsWith("one write tx");
      // forkpoint's SQL alone is only the chat's writes: its other figures are not measured, not missing.
      const sqlCell = sql && !floorOnly && q != null && !Number.isNaN(q) ? fmt(q) : "-";
      out.push(
        `  ${label.padEnd(22)}${pad(peer && !floorOnly ? fmt(p) : "-", 11)}${pad(saver && !floorOnly ? fmt(sv) : "-", 11)}` +
          `${pad(fp && !floorOnly ? fmt(f) : "-", 11)}${pad(sqlCell, 11)}${pad(floor ? fmt(l) : "-", 11)}` +
          `${pad(isRatio ? "" : ratio(p, sv), 9)}${pad(isRatio ? "" : ratio(p, f), 9)}${pad(isRatio ? "" : ratio(f, q), 9)}${pad(isRatio ? "" : ratio(f, l), 9)}`,
      );
    }
    for (const a of [fp, peer, saver, sql, floor]) for (const note of a?.notes ?? []) out.push(`  note: ${note}`);
  }
  if (sizes.length) {
    out.push(
      "",
      '  RSS "turns" = peak while writing the turns; "run" = whole process, including reads that materialize the',
      `  entire history several times. Both include the bare Node baseline of ${r.baselineRssMB?.toFixed(0) ?? "n/a"} MB.`,
    );
  }
  const h = r.history;
  if (h.floor || h.forkpoint) {
    out.push(
      "",
      `History read, ${(h.floor ?? h.forkpoint)!.count.toLocaleString("en-US")} messages (median)`,
      `  forkpoint ${ms(h.forkpoint?.ms)} ms   floor ${ms(h.floor?.ms)} ms   fp/floor ${ratio(h.forkpoint?.ms, h.floor?.ms) || "n/a"}`,
    );
  }
  const pg = r.pages;
  if (pg.floor || pg.forkpoint) {
    const any = (pg.floor ?? pg.forkpoint)!;
    out.push(
      "",
      `Many users: ${any.users.toLocaleString("en-US")} users, ${any.checkpoints.toLocaleString("en-US")} checkpoints, ${any.samples} sampled users`,
    );
    for (const [label, get] of [
      ["page 1", (p: PageFigures) => p.page1],
      ["page 2", (p: PageFigures) => p.page2],
    ] as const) {
      const f = pg.forkpoint ? get(pg.forkpoint) : undefined,
        l = pg.floor ? get(pg.floor) : undefined;
      out.push(
        `  ${label}: forkpoint median ${ms(f?.medianMs)} ms, p99 ${ms(f?.p99Ms)} ms | floor median ${ms(l?.medianMs)} ms, p99 ${ms(l?.p99Ms)} ms | fp/floor ${ratio(f?.medianMs, l?.medianMs) || "n/a"} (p99 ${ratio(f?.p99Ms, l?.p99Ms) || "n/a"})`,
      );
    }
    out.push(
      `  build: forkpoint ${ms(pg.forkpoint?.buildMs)} ms, ${mb(pg.forkpoint?.dbBytes)} MB | floor ${ms(pg.floor?.buildMs)} ms, ${mb(pg.floor?.dbBytes)} MB`,
    );
  }
  if (r.tools) {
    const t = r.tools;
    out.push(
      "",
      `Tools: rollback over ${t.invocations} recorded noop invocations (median of ${t.runs} runs)`,
      `  rollback ${ms(t.rollbackMs)} ms, undone ${t.undone}, ${ms(t.msPerUndone)} ms per undone invocation (journal included); recordToolCall ${ms(t.recordMsPerCall)} ms per call`,
    );
  }
  if (r.requests) {
    const q = r.requests;
    out.push(
      "",
      `Request ids: ${q.turns} turns of each kind per run, alternating (median of ${q.runs} runs)`,
      `  turn ${ms(q.plainMs)} ms without, ${ms(q.requestMs)} ms with { requestId }: ${q.ratio.toFixed(3)}× (runs: ${q.ratios.map((v) => v.toFixed(3)).join(", ")})`,
    );
    if (q.floor)
      out.push(
        `  floor (the same rows plus one ledger row keyed by session and request id): ${ms(q.floor.plainMs)} ms without, ${ms(q.floor.requestMs)} ms with: ${q.floor.ratio.toFixed(3)}×; the row costs forkpoint ${ms(q.requestMs - q.plainMs)} ms, the floor ${ms(q.floor.requestMs - q.floor.plainMs)} ms`,
      );
  }
  const walSizes = Object.keys(r.walWorker)
    .map(Number)
    .sort((a, b) => a - b);
  if (walSizes.length) {
    out.push(
      "",
      "forkpoint with walWorker: true (opt-in: WAL checkpoints on a worker thread) beside its default, same N",
      `  ${"N".padEnd(9)} ${"total default → worker (ms)".padEnd(30)} ${"p99 turn (ms)".padEnd(18)} ${"mean turn (ms)".padEnd(18)} RSS while writing (MB)`,
    );
    for (const n of walSizes) {
      const w = r.walWorker[n]!,
        d = r.chat.forkpoint[n];
      const pair = (f: (a: ChatAgg) => number | null, fmt: (x: number | null) => string) => `${d ? fmt(f(d)) : "-"} → ${fmt(f(w))}`;
      out.push(
        `  ${n.toLocaleString("en-US").padEnd(9)} ${pair((a) => a.totalMs, ms).padEnd(30)} ${pair((a) => a.p99TurnMs, ms).padEnd(18)} ${pair((a) => a.meanTurnMs, ms).padEnd(18)} ${pair(
          (a) => a.turnsRssMB,
          (x) => (x === null ? "-" : x.toFixed(0)),
        )}`,
      );
    }
  }
  const graphSizes = Object.keys(r.graph ?? {})
    .map(Number)
    .sort((a, b) => a - b);
  if (graphSizes.length) {
    out.push(
      "",
      "A real LangGraph graph: StateGraph(MessagesAnnotation), one node answering, LangChain messages, one invoke per turn",
      `  ${"invokes".padEnd(9)} ${"".padEnd(14)} ${pad("total (ms)", 11)} ${pad("first 10%", 11)} ${pad("last 10%", 11)} ${pad("getState", 11)} ${pad("runs", 5)}`,
    );
    for (const n of graphSizes) {
      const g = r.graph[n]!;
      for (const [label, a] of [
        ["SqliteSaver", g.peer],
        ["ForkpointSaver", g.saver],
      ] as const) {
        if (a)
          out.push(
            `  ${n.toLocaleString("en-US").padEnd(9)} ${label.padEnd(14)} ${pad(ms(a.totalMs), 11)} ${pad(ms(a.firstMs), 11)} ${pad(ms(a.lastMs), 11)} ${pad(ms(a.getStateMs), 11)} ${pad(String(a.runs), 5)}`,
          );
      }
      if (g.peer && g.saver)
        out.push(`  ${"".padEnd(9)} ${"SqliteSaver / ForkpointSaver, total:".padEnd(14)} ${ratio(g.peer.totalMs, g.saver.totalMs)}`);
    }
  }
  for (const e of r.errors) out.push("", `ERROR: ${e}`);
  return out.join("\n");
}

export function evaluateTargets(r: Results): Target[] {
  const t: Target[] = [];
  const add = (name: string, ok: boolean | null, detail: string) =>
    t.push({ name, status: ok === null ? "NOT MEASURED" : ok ? "MET" : "MISSED", detail });
  const x = (a: number | null | undefined, b: number | null | undefined) =>
    a == null || b == null || !Number.isFinite(a) || !Number.isFinite(b) || b === 0 ? null : a / b;
  const f2 = (v: number | null) => (v == null ? "n/a" : v.toFixed(2));
  const { peer, forkpoint: fp, floor, sql } = r.chat;

  const s1 = x(peer[1000]?.totalMs, fp[1000]?.totalMs),
    z1 = x(peer[1000]?.dbBytes, fp[1000]?.dbBytes);
  // For scale: how far the bare floor gets, and forkpoint's own SQL with no engine JavaScript (the bound its schema sets).
  const floorRef = (n: number) => {
    const q = x(peer[n]?.totalMs, floor[n]?.totalMs),
      s = x(peer[n]?.totalMs, sql?.[n]?.totalMs);
    const parts = [
      q == null ? "" : `the floor itself: peer/floor = ${f2(q)}×`,
      s == null ? "" : `forkpoint's SQL alone: peer/SQL = ${f2(s)}×`,
    ].filter(Boolean);
    return parts.length ? ` (${parts.join("; ")})` : "";
  };
  add("N=1,000: forkpoint ≥20× faster than SqliteSaver", s1 == null ? null : s1 >= 20, `peer/fp total = ${f2(s1)}×${floorRef(1000)}`);
  add("N=1,000: forkpoint db ≥50× smaller than SqliteSaver", z1 == null ? null : z1 >= 50, `peer/fp size = ${f2(z1)}×`);
  const s3 = x(peer[3000]?.totalMs, fp[3000]?.totalMs);
  add("N=3,000: forkpoint ≥100× faster than SqliteSaver", s3 == null ? null : s3 >= 100, `peer/fp total = ${f2(s3)}×${floorRef(3000)}`);

  const flat = Object.values(fp).map((a) => ({ n: a.n, q: x(a.lastMs, a.firstMs) }));
  add(
    "flat cost: last-10% turn median ≤1.5× first-10% at every N",
    flat.length === 0 || flat.some((f) => f.q == null) ? null : flat.every((f) => f.q! <= 1.5),
    flat.map((f) => `N=${f.n}: ${f2(f.q)}`).join(", ") || "no forkpoint runs",
  );

  const c10 = x(fp[10_000]?.totalMs, floor[10_000]?.totalMs);
  add("chat at N=10,000 ≤3× floor", c10 == null ? null : c10 <= 3, `fp/floor total = ${f2(c10)}×`);
  add("chat at N=10,000 ≤2× floor (issue 37)", c10 == null ? null : c10 <= 2, `fp/floor total = ${f2(c10)}×`);
  const hr = x(r.history.forkpoint?.ms, r.history.floor?.ms);
  add("20,000-message history read ≤1.5× floor", hr == null ? null : hr <= 1.5, `fp/floor = ${f2(hr)}×`);
  add("20,000-message history read ≤1.3× floor (issue 37)", hr == null ? null : hr <= 1.3, `fp/floor = ${f2(hr)}×`);
  const p1 = x(r.pages.forkpoint?.page1.medianMs, r.pages.floor?.page1.medianMs);
  const p2 = x(r.pages.forkpoint?.page2.medianMs, r.pages.floor?.page2.medianMs);
  const users = r.pages.floor?.checkpoints ?? r.pages.forkpoint?.checkpoints;
  add(
    `page of 50 and next page among ${users?.toLocaleString("en-US") ?? "?"} checkpoints ≤2× floor (medians)`,
    p1 == null || p2 == null ? null : p1 <= 2 && p2 <= 2,
    `page 1 ${f2(p1)}×, page 2 ${f2(p2)}×`,
  );

  // Against the floor's write transaction timed right after the operation in forkpoint's process; the floor process's
  // own figure, timed minutes apart in another process, is printed beside it.
  // The ratio is taken within each run, then the median across runs: a ratio of medians could pair figures of
  // different runs, which is the drift this avoids.
  for (const [op, cold, paired] of [
    ["rollbackMs", "rollbackColdMs", "rollbackVsFloor"],
    ["editMs", "editColdMs", "editVsFloor"],
  ] as const) {
    const qs = Object.values(fp).map((a) => ({
      n: a.n,
      q: a[paired],
      c: x(a[cold], floor[a.n]?.writeTxMs),
      apart: x(a[op], floor[a.n]?.writeTxMs),
    }));
    add(
      `${op === "rollbackMs" ? "rollback" : "edit"} without tools ≤5× one floor write tx at every N (steady state)`,
      qs.length === 0 || qs.some((q) => q.q == null) ? null : qs.every((q) => q.q! <= 5),
      (qs.map((q) => `N=${q.n}: ${f2(q.q)}×`).join(", ") || "no forkpoint runs") +
        (qs.length ? `; against the floor process's write tx instead: ${qs.map((q) => `${f2(q.apart)}×`).join(", ")}` : "") +
        (qs.length ? `; first 21 calls: ${qs.map((q) => `${f2(q.c)}×`).join(", ")}` : "") +
        // For scale: the floor doing the edit's own work (a branch row and a message row) in its one transaction.
        (op === "editMs" && qs.length
          ? `; against the floor's own edit transaction: ${Object.values(fp)
              .map((a) => `${f2(x(a.editMs, floor[a.n]?.editMs))}×`)
              .join(", ")}`
          : ""),
    );
    add(
      `${op === "rollbackMs" ? "rollback" : "edit"} without tools ≤6× one floor write tx at every N (steady state; issue 37)`,
      qs.length === 0 || qs.some((q) => q.q == null) ? null : qs.every((q) => q.q! <= 6),
      qs.map((q) => `N=${q.n}: ${f2(q.q)}×`).join(", ") || "no forkpoint runs",
    );
  }
  const big = fp[100_000];
  add(
    "per-turn cost flat to 100,000 turns: last-10% turn median ≤1.5× first-10% (issue 37)",
    big ? big.lastMs / big.firstMs <= 1.5 : null,
    big ? `N=100,000: ${f2(big.lastMs / big.firstMs)}` : "N=100,000 not run",
  );
  const q = r.requests;
  add(
    "a turn with a requestId costs ≤1.10× one without (issue 31)",
    q ? q.ratio <= 1.1 : null,
    q
      ? `${q.ratio.toFixed(3)}× (${ms(q.requestMs)} against ${ms(q.plainMs)} ms; median of ${q.runs} runs)` +
          (q.floor ? `; the floor's own turn pays ${q.floor.ratio.toFixed(3)}× for the same ledger row` : "")
      : "not run",
  );
  const rss = fp[100_000]?.turnsRssMB,
    a = fp[100_000],
    b = floor[100_000];
  add(
    "peak RSS during the N=100,000 chat < 200 MB",
    rss == null ? null : rss < 200,
    rss == null || !a
      ? "N=100,000 not run"
      : `${rss.toFixed(0)} MB while writing (floor ${b?.turnsRssMB.toFixed(0) ?? "n/a"} MB); whole run with 200,000-message reads ${a.peakRssMB.toFixed(0)} MB (floor ${b?.peakRssMB.toFixed(0) ?? "n/a"} MB); Node baseline ${r.baselineRssMB?.toFixed(0) ?? "n/a"} MB`,
  );
  return t;
}

export function formatTargets(targets: Target[]): string {
  return [
    "",
    "Targets (issue 4; issues 31 and 37 where named)",
    ...targets.map((t) => `  [${t.status.padEnd(12)}] ${t.name}: ${t.detail}`),
  ].join("\n");
}
