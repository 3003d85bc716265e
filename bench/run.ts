// Entry point (`npm run bench [-- --quick] [--only peer,floor]`): runs every job in a child process, prints, writes JSON.
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Job } from "./child.js";
import { compileBench } from "./compile.js";
import { forkpointAvailable, type RequestFigures } from "./forkpoint.js";
import { makePlan, type PgSystem, type SqliteSystem, type System } from "./plan.js";
import type { GraphFigures } from "./graph-langgraph.js";
import { runPostgresPart } from "./postgres.js";
import { aggregateChat, aggregateGraph, evaluateTargets, formatTables, formatTargets, type Results } from "./report.js";
import { evaluatePgTargets, formatPgTables, formatPgTargets } from "./report-postgres.js";
import { aggregateWorkspace, evaluateWorkspaceTargets, formatWorkspaceTables, type WorkspaceAgg } from "./report-workspace.js";
import type { WorkspaceFigures } from "./workspace.js";
import { median, now, type ChatFigures } from "./util.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes("--quick");
const onlyArg = args[args.indexOf("--only") + 1];
const ALL: System[] = ["peer", "saver", "forkpoint", "sql", "floor", "pg", "pgpeer", "workspace", "requests"];
let systems: System[] = args.includes("--only") && onlyArg ? (onlyArg.split(",") as System[]) : ALL;
const unknown = systems.filter((s) => !ALL.includes(s));
if (unknown.length) {
  console.error(`unknown system(s) in --only: ${unknown.join(", ")} (known: ${ALL.join(", ")})`);
  process.exit(2);
}
if (systems.some((s) => s === "forkpoint" || s === "pg") && !forkpointAvailable()) {
  console.log("forkpoint: src/index.ts does not exist yet; running the peers and the floor only");
  systems = systems.filter((s) => s !== "forkpoint" && s !== "saver" && s !== "sql" && s !== "pg" && s !== "workspace" && s !== "requests");
}
const plan = makePlan(quick);
// `--sizes 100000` (comma-separated): only the chats of those sizes in the mode's plan (and the walWorker's), none of
// the other parts: issue 37's 100,000-turn figure without the whole full run.
const sizesArg = args.includes("--sizes") ? args[args.indexOf("--sizes") + 1] : undefined;
const chatSizes = sizesArg?.split(",").map(Number);
if (chatSizes) {
  plan.chat = plan.chat.filter((c) => chatSizes.includes(c.n));
  plan.walWorker = plan.walWorker.filter((w) => chatSizes.includes(w.n));
  plan.history.runs = 0;
  plan.graph = [];
  plan.tools.runs = 0;
  if (plan.chat.length === 0) console.log(`--sizes ${sizesArg}: no chat of those sizes in the ${plan.mode} plan`);
}
const t0 = now();
const log = (s: string) => process.stderr.write(`[${((now() - t0) / 1000).toFixed(1).padStart(6)}s] ${s}\n`);

const BUILD = await compileBench(ROOT);

/** Run one job in a fresh Node process, on the compiled JavaScript (no loader); returns its result and peak RSS in MB. */
function child<T>(job: Job): { result: T; rssMB: number } {
  const p = spawnSync(process.execPath, [join(BUILD, "bench/child.js"), JSON.stringify(job)], {
    cwd: ROOT,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 64 << 20,
  });
  const line = p.stdout.trim().split("\n").pop() ?? "";
  let msg: { ok: boolean; result?: T; maxRssMB?: number; error?: string };
  try {
    msg = JSON.parse(line);
  } catch {
    throw new Error(`${job.kind} ${job.system}: child exited with ${p.status ?? p.signal} and no result`);
  }
  if (!msg.ok) throw new Error(`${job.kind} ${job.system}: ${msg.error}`);
  return { result: msg.result!, rssMB: msg.maxRssMB! };
}

const results: Results = {
  chat: { peer: {}, saver: {}, forkpoint: {}, sql: {}, floor: {} },
  history: {},
  pages: {},
  tools: null,
  requests: null,
  walWorker: {},
  graph: {},
  baselineRssMB: null,
  postgres: null,
  workspace: {},
  errors: [],
};
function attempt(label: string, fn: () => void) {
  try {
    fn();
  } catch (e) {
    results.errors.push((e as Error).message);
    log(`${label}: FAILED (${(e as Error).message.split("\n")[0]})`);
  }
}

console.log(`forkpoint benchmark, ${plan.mode} mode: ${os.cpus()[0]?.model ?? "?"} ×${os.cpus().length}, Node ${process.version}`);
for (const n of plan.peerSkipped)
  if (systems.includes("peer") && n > 3000) {
    console.log(
      `peer skipped at N=${n.toLocaleString("en-US")}: SqliteSaver stores the whole message list in every checkpoint, so its cost grows quadratically`,
    );
  }

attempt("baseline", () => {
  results.baselineRssMB = child<object>({ kind: "baseline", system: "floor" }).rssMB;
});

// History read first, on a quiet machine: run right after the 100,000-turn chats (which leave hundreds of MB written),
// both systems' reads were slower and bimodal (floor 35 or 60 ms); run alone they were steady. Runs alternate; medians.
const engines = (["forkpoint", "floor"] as const).filter((s) => systems.includes(s));
const hist = new Map<string, { ms: number[]; rss: number }>(engines.map((s) => [s, { ms: [], rss: 0 }]));
for (let i = 0; i < plan.history.runs; i++) {
  for (const system of engines) {
    attempt(`history ${system}`, () => {
      const r = child<{ count: number; ms: number }>({ kind: "history", system, n: plan.history.n, reps: plan.history.reps });
      const h = hist.get(system)!;
      h.ms.push(r.result.ms);
      h.rss = Math.max(h.rss, r.rssMB);
      log(`history ${system}: ${r.result.ms.toFixed(2)} ms`);
    });
  }
}
for (const [system, h] of hist)
  if (h.ms.length) results.history[system as System] = { count: plan.history.n, ms: median(h.ms), peakRssMB: h.rss };

// Chat: at each N the systems' runs alternate (peer, forkpoint, floor, peer, ...), so load on the machine hits them alike.
const sizes = [...new Set(plan.chat.map((c) => c.n))];
for (const n of sizes) {
  const here = plan.chat.filter((c) => c.n === n && systems.includes(c.system));
  const runs = new Map<SqliteSystem, { fig: ChatFigures; rssMB: number }[]>(here.map((c) => [c.system, []]));
  for (let i = 0; i < Math.max(0, ...here.map((c) => c.runs)); i++) {
    for (const { system, runs: total } of here) {
      if (i >= total || !runs.has(system)) continue;
      attempt(`chat ${system} N=${n}`, () => {
        try {
          const r = child<ChatFigures>({ kind: "chat", system, n });
          runs.get(system)!.push({ fig: r.result, rssMB: r.rssMB });
          log(
            `chat ${system.padEnd(9)} N=${String(n).padEnd(6)} run ${i + 1}/${total}: total ${r.result.totalMs.toFixed(0)} ms, RSS ${r.rssMB.toFixed(0)} MB`,
          );
        } catch (e) {
          runs.delete(system); // one failure drops the system at this N
          throw e;
        }
      });
    }
  }
  for (const [system, rs] of runs) if (rs.length) results.chat[system][n] = aggregateChat(rs);
}

// The opt-in WAL worker, after the default chats so the comparison at each N is with runs already made.
if (systems.includes("forkpoint")) {
  for (const { n, runs: total } of plan.walWorker) {
    attempt(`chat forkpoint+walWorker N=${n}`, () => {
      const rs: { fig: ChatFigures; rssMB: number }[] = [];
      for (let i = 0; i < total; i++) {
        const r = child<ChatFigures>({ kind: "chat", system: "forkpoint", n, walWorker: true });
        rs.push({ fig: r.result, rssMB: r.rssMB });
        log(
          `chat fp+walWorker N=${String(n).padEnd(6)} run ${i + 1}/${total}: total ${r.result.totalMs.toFixed(0)} ms, RSS ${r.rssMB.toFixed(0)} MB`,
        );
      }
      results.walWorker[n] = aggregateChat(rs);
    });
  }
}

// A real LangGraph graph on both checkpointers, runs alternating.
const graphSystems = (["peer", "saver"] as const).filter((s) => systems.includes(s));
for (const { n, runs: total } of graphSystems.length ? plan.graph : []) {
  const rs = new Map<"peer" | "saver", GraphFigures[]>(graphSystems.map((s) => [s, []]));
  for (let i = 0; i < total; i++) {
    for (const system of graphSystems) {
      attempt(`graph ${system} N=${n}`, () => {
        const r = child<GraphFigures>({ kind: "graph", system, n });
        rs.get(system)!.push({ ...r.result, peakRssMB: r.rssMB });
        log(`graph ${system.padEnd(5)} N=${String(n).padEnd(4)} run ${i + 1}/${total}: total ${r.result.totalMs.toFixed(0)} ms`);
      });
    }
  }
  results.graph[n] = Object.fromEntries([...rs].filter(([, v]) => v.length).map(([s, v]) => [s, aggregateGraph(v)]));
}

for (const system of chatSizes ? [] : engines) {
  attempt(`pages ${system}`, () => {
    const r = child<NonNullable<Results["pages"]["floor"]>>({ kind: "pages", system, ...plan.pages });
    results.pages[system] = { ...r.result, peakRssMB: r.rssMB };
    log(`pages ${system}: built in ${(r.result.buildMs / 1000).toFixed(1)} s, page 1 median ${r.result.page1.medianMs.toFixed(3)} ms`);
  });
}
if (systems.includes("forkpoint") && plan.tools.runs > 0) {
  attempt("tools forkpoint", () => {
    const rs: NonNullable<Results["tools"]>[] = [];
    for (let i = 0; i < plan.tools.runs; i++)
      rs.push(child<NonNullable<Results["tools"]>>({ kind: "tools", system: "forkpoint", n: plan.tools.n }).result);
    const pick = (k: "recordMsPerCall" | "rollbackMs" | "undone" | "msPerUndone") => median(rs.map((r) => r[k]));
    results.tools = {
      invocations: plan.tools.n,
      runs: rs.length,
      recordMsPerCall: pick("recordMsPerCall"),
      rollbackMs: pick("rollbackMs"),
      undone: pick("undone"),
      msPerUndone: pick("msPerUndone"),
    };
    log(`tools forkpoint: ${results.tools.msPerUndone.toFixed(3)} ms per undone invocation`);
  });
}

// Request ids (issue 31): turns with and without one, alternating in each run, for forkpoint and for the floor (what
// SQLite itself charges for the ledger row); the median of the runs' figures.
if (systems.includes("requests")) {
  attempt("requests", () => {
    const runsOf = (system: "forkpoint" | "floor") => {
      const rs: RequestFigures[] = [];
      for (let i = 0; i < plan.requests.runs; i++) {
        const r = child<RequestFigures>({ kind: "requests", system, n: plan.requests.n }).result;
        rs.push(r);
        log(
          `requests ${system} run ${i + 1}/${plan.requests.runs}: ${(r.plainMs * 1000).toFixed(0)} / ${(r.requestMs * 1000).toFixed(0)} µs, ${r.ratio.toFixed(3)}×`,
        );
      }
      const pick = (k: "plainMs" | "requestMs" | "ratio" | "turns") => median(rs.map((r) => r[k]));
      return {
        turns: pick("turns"),
        plainMs: pick("plainMs"),
        requestMs: pick("requestMs"),
        ratio: pick("ratio"),
        runs: rs.length,
        ratios: rs.map((r) => r.ratio),
      };
    };
    results.requests = { ...runsOf("forkpoint"), floor: runsOf("floor") };
  });
}

// Workspaces (issue 33): each run generates its tree, then times forkpoint and a shadow git repository side by side.
if (systems.includes("workspace")) {
  for (const w of plan.workspace) {
    const runs: WorkspaceFigures[] = [];
    for (let i = 0; i < w.runs; i++) {
      attempt(`workspace ${w.files}`, () => {
        const r = child<WorkspaceFigures>({ kind: "workspace", system: "workspace", workspace: { ...w, seed: 33 } });
        runs.push(r.result);
        const f = r.result.forkpoint;
        log(
          `workspace ${w.files} run ${i + 1}/${w.runs}: incremental git ${r.result.git.incrementalMs.toFixed(0)} / fp ${f.incrementalMs.toFixed(1)} ms, ` +
            `tool overhead ${f.toolOverheadMs.toFixed(1)} ms, restore git ${r.result.git.restoreMs.toFixed(0)} / fp ${f.restoreMs.toFixed(0)} ms, ` +
            `${(r.result.git.bytes / 1e6).toFixed(1)} / ${(f.bytes / 1e6).toFixed(1)} MB, RSS ${f.peakRssMB.toFixed(0)} MB`,
        );
      });
    }
    if (runs.length) results.workspace[w.files] = aggregateWorkspace(runs);
  }
}

// PostgreSQL last: one server for the part, started here and stopped at its end (also on failure).
const pgSystems = systems.filter((s): s is PgSystem => s === "pg" || s === "pgpeer");
if (pgSystems.length) {
  results.postgres = await runPostgresPart({
    plan: plan.postgres,
    systems: pgSystems,
    build: BUILD,
    root: ROOT,
    log,
    errors: results.errors,
  });
}

const targets = [...evaluateTargets(results), ...evaluateWorkspaceTargets(results.workspace)];
const postgresTargets = pgSystems.length ? evaluatePgTargets(results.postgres) : [];
console.log(formatTables(results, systems.includes("peer") ? plan.peerSkipped : []));
console.log(formatPgTables(results.postgres));
console.log(formatWorkspaceTables(results.workspace));
console.log(formatTargets(targets));
console.log(formatPgTargets(postgresTargets));
console.log(`\nwall time ${((now() - t0) / 1000).toFixed(1)} s`);

function version(pkg: string): string | null {
  try {
    return (
      JSON.parse(readFileSync(join(ROOT, pkg === "forkpoint" ? "" : `node_modules/${pkg}`, "package.json"), "utf8")) as { version: string }
    ).version;
  } catch {
    return null;
  }
}
const packages = Object.fromEntries(
  [
    "forkpoint",
    "better-sqlite3",
    "drizzle-orm",
    "@langchain/langgraph-checkpoint-sqlite",
    "@langchain/langgraph-checkpoint-postgres",
    "pg",
    "@langchain/langgraph-checkpoint",
    "@langchain/langgraph",
    "@langchain/core",
    "esbuild",
  ].map((p) => [p, version(p)]),
);
const cpus = os.cpus();
const doc = {
  date: new Date().toISOString(),
  mode: plan.mode,
  systems,
  wallMs: now() - t0,
  machine: {
    cpuModel: cpus[0]?.model ?? null,
    cpus: cpus.length,
    totalmemBytes: os.totalmem(),
    platform: os.platform(),
    release: os.release(),
    arch: os.arch(),
  },
  node: process.version,
  packages,
  plan,
  results,
  targets,
  postgresTargets,
};
mkdirSync(join(ROOT, "bench/results"), { recursive: true });
writeFileSync(join(ROOT, "bench/results/latest.json"), JSON.stringify(doc, null, 2) + "\n");
console.log("wrote bench/results/latest.json");
