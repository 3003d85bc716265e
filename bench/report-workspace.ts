// The workspace bench's table (forkpoint beside a shadow git repository) and issue 33's targets.
import type { Target } from "./report.js";
import type { WorkspaceFigures } from "./workspace.js";
import { median } from "./util.js";

/** Runs at one tree size, with their medians. */
export interface WorkspaceAgg {
  runs: WorkspaceFigures[];
  incrementalGitMs: number;
  incrementalFpMs: number;
  toolOverheadMs: number;
  restoreGitMs: number;
  restoreFpMs: number;
  gitBytes: number;
  fpBytes: number;
  peakRssMB: number;
}

export function aggregateWorkspace(runs: WorkspaceFigures[]): WorkspaceAgg {
  const m = (f: (r: WorkspaceFigures) => number) => median(runs.map(f));
  return {
    runs,
    incrementalGitMs: m((r) => r.git.incrementalMs),
    incrementalFpMs: m((r) => r.forkpoint.incrementalMs),
    toolOverheadMs: m((r) => r.forkpoint.toolOverheadMs),
    restoreGitMs: m((r) => r.git.restoreMs),
    restoreFpMs: m((r) => r.forkpoint.restoreMs),
    gitBytes: m((r) => r.git.bytes),
    fpBytes: m((r) => r.forkpoint.bytes),
    peakRssMB: Math.max(...runs.map((r) => r.forkpoint.peakRssMB)),
  };
}

const ms = (x: number) => (x >= 100 ? `${x.toFixed(0)} ms` : `${x.toFixed(1)} ms`);
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

export function formatWorkspaceTables(results: Record<number, WorkspaceAgg>): string {
  const sizes = Object.keys(results)
    .map(Number)
    .sort((a, b) => a - b);
  if (!sizes.length) return "";
  const out: string[] = ["", "## Workspaces (issue 33): forkpoint beside a shadow git repository"];
  for (const n of sizes) {
    const a = results[n]!;
    const r = a.runs[0]!;
    out.push(
      "",
      `${n.toLocaleString("en-US")} files (${mb(r.treeBytes)} of code-like text) + ${r.ignored.toLocaleString("en-US")} ignored in node_modules; ` +
        `${r.rounds} rounds of ${r.changedPerRound} edited files; ${a.runs.length} run(s), medians`,
      "",
      "| figure | shadow git | forkpoint | git / forkpoint |",
      "| --- | --- | --- | --- |",
      `| initial checkpoint | ${ms(median(a.runs.map((x) => x.git.initialMs)))} | attach ${ms(median(a.runs.map((x) => x.forkpoint.attachMs)))} + checkpoint ${ms(median(a.runs.map((x) => x.forkpoint.initialMs)))} | |`,
      `| incremental checkpoint (${r.changedPerRound} files changed) | ${ms(a.incrementalGitMs)} | ${ms(a.incrementalFpMs)} | ${(a.incrementalGitMs / a.incrementalFpMs).toFixed(2)}× |`,
      `| a tool call's overhead (it edits ${r.changedPerRound} files) | (incremental checkpoint: ${ms(a.incrementalGitMs)}) | ${ms(a.toolOverheadMs)} | ${(a.incrementalGitMs / a.toolOverheadMs).toFixed(2)}× |`,
      `| restore 10 checkpoints back | ${ms(a.restoreGitMs)} (reset --hard) | ${ms(a.restoreFpMs)} | ${(a.restoreGitMs / a.restoreFpMs).toFixed(2)}× |`,
      `| storage after ${r.rounds + 1} checkpoints | ${mb(a.gitBytes)} | ${mb(a.fpBytes)} | ${(a.gitBytes / a.fpBytes).toFixed(2)}× |`,
      `| peak RSS | | ${a.peakRssMB.toFixed(0)} MB | |`,
    );
    for (const x of a.runs) {
      out.push(
        `  run: incremental git [${x.git.incrementalRuns.map((v) => v.toFixed(0)).join(" ")}] ms, forkpoint [${x.forkpoint.incrementalRuns.map((v) => v.toFixed(0)).join(" ")}] ms; ` +
          `tool ${x.forkpoint.toolWithWorkspaceMs.toFixed(1)} − ${x.forkpoint.toolBareMs.toFixed(1)} ms; restores git [${x.git.restoreRuns.map((v) => v.toFixed(0)).join(" ")}], forkpoint [${x.forkpoint.restoreRuns.map((v) => v.toFixed(0)).join(" ")}] ms; generated in ${(x.generateMs / 1000).toFixed(1)} s`,
      );
    }
  }
  return out.join("\n");
}

/** Issue 33's targets, on the 30,000-file tree. */
export function evaluateWorkspaceTargets(results: Record<number, WorkspaceAgg>): Target[] {
  const a = results[30_000];
  if (!a) return [];
  const t = (name: string, ok: boolean, detail: string): Target => ({ name, status: ok ? "MET" : "MISSED", detail });
  return [
    t(
      "workspace: incremental checkpoint ≥ 5× faster than shadow git",
      a.incrementalGitMs / a.incrementalFpMs >= 5,
      `${(a.incrementalGitMs / a.incrementalFpMs).toFixed(2)}× (${ms(a.incrementalGitMs)} / ${ms(a.incrementalFpMs)})`,
    ),
    t(
      "workspace: tool call overhead ≤ shadow git's incremental checkpoint",
      a.toolOverheadMs <= a.incrementalGitMs,
      `${ms(a.toolOverheadMs)} against ${ms(a.incrementalGitMs)}`,
    ),
    t(
      "workspace: restore 10 back no slower than git reset --hard",
      a.restoreFpMs <= a.restoreGitMs,
      `${ms(a.restoreFpMs)} against ${ms(a.restoreGitMs)}`,
    ),
    t("workspace: storage ≤ shadow git's", a.fpBytes <= a.gitBytes, `${mb(a.fpBytes)} against ${mb(a.gitBytes)}`),
    t("workspace: peak RSS < 300 MB", a.peakRssMB < 300, `${a.peakRssMB.toFixed(0)} MB`),
  ];
}
