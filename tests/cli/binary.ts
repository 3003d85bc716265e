// The forkpoint command as npm installs it: src/ compiled to JavaScript (the run's tree, tests/setup/compiled.ts: one
// file per source file, as tsc lays out dist/) and run through a symlink to dist/cli/main.js, in a child process with
// real pipes.
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { compiledScript } from "../fixtures/compiled.js";

export const repo = fileURLToPath(new URL("../..", import.meta.url));

export interface Installed {
  /** A temp dir of the test file's own (databases, modules it writes), holding the `forkpoint` symlink; removed by `remove`. */
  dir: string;
  /** The symlink npm would make: `node_modules/.bin/forkpoint` → `dist/cli/main.js`. */
  bin: string;
  run(args: string[], options?: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string }): SpawnSyncReturns<string>;
  remove(): void;
}

/** Links the binary to the run's compiled tree (its package.json, drizzle/ and node_modules linked beside dist/). */
export async function installCli(): Promise<Installed> {
  const main = compiledScript(join(repo, "src", "cli", "main.ts"));
  if (!main) throw new Error("no compiled tree for the CLI: run through vitest (tests/setup/compiled.ts builds it)");
  const dir = mkdtempSync(join(tmpdir(), "forkpoint-bin-"));
  mkdirSync(join(dir, "bin"));
  const bin = join(dir, "bin", "forkpoint");
  symlinkSync(main, bin);
  return {
    dir,
    bin,
    run: (args, options = {}) =>
      spawnSync(process.execPath, [bin, ...args], {
        cwd: options.cwd ?? dir,
        encoding: "utf8",
        input: options.input ?? "",
        // Pipes, not a terminal; and none of the runner's own forkpoint or colour settings leak in.
        env: { PATH: process.env.PATH, HOME: process.env.HOME, ...options.env },
      }),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/**
 * Runs `command` under a pseudo-terminal (util-linux `script`): stdin, stdout and stderr are a TTY, stdout and stderr
 * merged into one. `input` is typed at the terminal (echoed into the output, as a terminal does); then it is closed.
 */
export function runInTerminal(command: string[], env: NodeJS.ProcessEnv = {}, input = ""): { status: number | null; output: string } {
  const quoted = command.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const r = spawnSync("script", ["-qec", quoted, "/dev/null"], {
    encoding: "utf8",
    input,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: "xterm", COLUMNS: "120", ...env },
  });
  return { status: r.status, output: r.stdout };
}
