// The workspace bench (issue 33): forkpoint's workspace checkpoints, tool calls and restores on a generated source tree,
// beside a shadow git repository (`git --git-dir=… --work-tree=… add -A && commit`) making the same checkpoints.
import Database from "better-sqlite3";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { editFiles, generateTree } from "./workspace-tree.js";
import { median, now, peakRssMB, tempDir } from "./util.js";

// Loose local views of the API, so this file runs against whatever the engine exports today.
interface Cp {
  id: string;
}
interface Session {
  id: string;
  attachWorkspace(dir: string, o: { exclude?: string[] }): Promise<unknown>;
  checkpoint(o: { name: string }): Promise<Cp>;
  invoke(tool: string, args: unknown): Promise<unknown>;
  rollback(id: string, o: { scope: "files" }): Promise<unknown>;
}
interface Fp {
  createSession(o: { userId: string; title: string }): Promise<Session>;
  close(): Promise<void>;
}
interface Api {
  openForkpoint(o: { path: string; tools?: unknown[] }): Fp;
  defineTool(t: unknown): unknown;
}

/** One run's figures (ms, bytes, MB). */
export interface WorkspaceFigures {
  files: number;
  ignored: number;
  treeBytes: number;
  rounds: number;
  changedPerRound: number;
  generateMs: number;
  git: { initialMs: number; incrementalMs: number; incrementalRuns: number[]; restoreMs: number; restoreRuns: number[]; bytes: number };
  forkpoint: {
    attachMs: number;
    initialMs: number;
    incrementalMs: number;
    incrementalRuns: number[];
    /** A tool call's time on the workspace's session minus the same call's on a session without one (medians). */
    toolOverheadMs: number;
    toolWithWorkspaceMs: number;
    toolBareMs: number;
    restoreMs: number;
    restoreRuns: number[];
    bytes: number;
    peakRssMB: number;
  };
}

/** Runs `git` on the shadow repository; throws with its stderr on failure. */
function git(gitDir: string, workTree: string, ...args: string[]): string {
  const p = spawnSync(
    "git",
    [`--git-dir=${gitDir}`, `--work-tree=${workTree}`, "-c", "user.name=bench", "-c", "user.email=bench@example.com", ...args],
    { encoding: "utf8", maxBuffer: 64 << 20 },
  );
  if (p.status !== 0) throw new Error(`git ${args.join(" ")}: ${p.stderr || p.error?.message}`);
  return p.stdout.trim();
}

/** Bytes of every file under `dir` (apparent sizes, as `du -sb` counts them). */
function treeBytes(dir: string): number {
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const full = join(dir, e.name);
    total += e.isDirectory() ? treeBytes(full) : statSync(full).size;
  }
  return total;
}

/** The SQLite database's size as its pages hold it (WAL included, free pages not), read by a second connection. */
function databaseBytes(file: string): number {
  const db = new Database(file, { readonly: true });
  try {
    const pages = (db.pragma("page_count", { simple: true }) as number) - (db.pragma("freelist_count", { simple: true }) as number);
    return pages * (db.pragma("page_size", { simple: true }) as number);
  } finally {
    db.close();
  }
}

const timed = async (fn: () => unknown): Promise<number> => {
  const t0 = now();
  await fn();
  return now() - t0;
};

/**
 * The scenario: generate the tree; an initial checkpoint in both; `rounds` rounds of `changed` edited files, each
 * followed by a checkpoint in both (so 1 + rounds checkpoints: the storage is measured then); tool calls that edit
 * `changed` files, on the workspace's session and on a session without one; a last checkpoint in both; then restores
 * 10 checkpoints back and forth again, three times each, forkpoint's then git's.
 */
export async function runWorkspaceBench(o: {
  files: number;
  ignored: number;
  rounds: number;
  changed: number;
  seed: number;
}): Promise<WorkspaceFigures> {
  const { openForkpoint, defineTool } = (await import("../src/index.js")) as unknown as Api;
  const { dir, cleanup } = tempDir("workspace");
  const root = join(dir, "tree");
  const gitDir = join(dir, "shadow.git");
  const dbFile = join(dir, "forkpoint.db");
  mkdirSync(root);
  try {
    let t = now();
    const tree = generateTree(root, { files: o.files, ignored: o.ignored, seed: o.seed });
    const generateMs = now() - t;
    let round = 0;
    const editTool = defineTool({
      name: "edit_files",
      run: async (args: { round: number }) => editFiles(root, tree.paths, args.round, o.changed).length,
    });
    const fp = openForkpoint({ path: dbFile, tools: [editTool] });
    try {
      git(gitDir, root, "init", "-q");
      // gc runs in the commit that triggers it (not in a detached process timed as part of forkpoint's figures).
      git(gitDir, root, "config", "gc.autoDetach", "false");
      const gitCommits: string[] = [];
      const gitCommit = (name: string) => {
        git(gitDir, root, "add", "-A");
        git(gitDir, root, "commit", "-q", "--no-verify", "-m", name);
        gitCommits.push(git(gitDir, root, "rev-parse", "HEAD"));
      };
      const gitInitialMs = await timed(() => gitCommit("cp 0"));

      const s = await fp.createSession({ userId: "bench", title: "workspace" });
      const attachMs = await timed(() => s.attachWorkspace(root, { exclude: ["node_modules/", "*.log"] }));
      const cps: Cp[] = [];
      const initialMs = await timed(async () => cps.push(await s.checkpoint({ name: "cp 0" })));

      const gitRuns: number[] = [];
      const fpRuns: number[] = [];
      for (round = 1; round <= o.rounds; round++) {
        editFiles(root, tree.paths, round, o.changed);
        // The order alternates, so that whatever one leaves in the page cache helps both alike.
        const doGit = async () => gitRuns.push(await timed(() => gitCommit(`cp ${round}`)));
        const doFp = async () => fpRuns.push(await timed(async () => cps.push(await s.checkpoint({ name: `cp ${round}` }))));
        if (round % 2) (await doGit(), await doFp());
        else (await doFp(), await doGit());
      }
      const gitBytes = treeBytes(gitDir);
      const fpBytes = databaseBytes(dbFile);

      // Tool calls: the same tool on a session without a workspace (its edits are drift to the other session, taken
      // in by a checkpoint before the timed calls there), then on the workspace's session.
      const bare = await fp.createSession({ userId: "bench", title: "no workspace" });
      const toolRuns = 7;
      const bareRuns: number[] = [];
      for (let i = 0; i < toolRuns; i++) bareRuns.push(await timed(() => bare.invoke("edit_files", { round: 1000 + i })));
      await s.checkpoint({ name: "after bare tools" });
      const wsRuns: number[] = [];
      for (let i = 0; i < toolRuns; i++) wsRuns.push(await timed(() => s.invoke("edit_files", { round: 2000 + i })));
      cps.push(await s.checkpoint({ name: "after tools" }));
      gitCommit("after tools");

      // Restores 10 checkpoints back, then forward again (the alternation lets every timed call write files).
      const back = cps[cps.length - 11]!;
      const head = cps[cps.length - 1]!;
      const fpRestores: number[] = [];
      for (let i = 0; i < 3; i++) {
        fpRestores.push(await timed(() => s.rollback(back.id, { scope: "files" })));
        await s.rollback(head.id, { scope: "files" });
      }
      const peak = peakRssMB();
      const gitBack = gitCommits[gitCommits.length - 11]!;
      const gitHead = gitCommits[gitCommits.length - 1]!;
      const gitRestores: number[] = [];
      for (let i = 0; i < 3; i++) {
        gitRestores.push(await timed(() => git(gitDir, root, "reset", "-q", "--hard", gitBack)));
        git(gitDir, root, "reset", "-q", "--hard", gitHead);
      }
      return {
        files: o.files,
        ignored: o.ignored,
        treeBytes: tree.bytes,
        rounds: o.rounds,
        changedPerRound: o.changed,
        generateMs,
        git: {
          initialMs: gitInitialMs,
          incrementalMs: median(gitRuns),
          incrementalRuns: gitRuns,
          restoreMs: median(gitRestores),
          restoreRuns: gitRestores,
          bytes: gitBytes,
        },
        forkpoint: {
          attachMs,
          initialMs,
          incrementalMs: median(fpRuns),
          incrementalRuns: fpRuns,
          toolOverheadMs: median(wsRuns) - median(bareRuns),
          toolWithWorkspaceMs: median(wsRuns),
          toolBareMs: median(bareRuns),
          restoreMs: median(fpRestores),
          restoreRuns: fpRestores,
          bytes: fpBytes,
          peakRssMB: peak,
        },
      };
    } finally {
      await fp.close();
    }
  } finally {
    if (existsSync(dir)) cleanup();
  }
}
