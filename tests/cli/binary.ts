// The forkpoint command as npm installs it: src/ compiled to JavaScript (esbuild, one file per source file, as tsc
// lays out dist/) and run through a symlink to cli/main.js, in a child process with real pipes.
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

export const repo = fileURLToPath(new URL("../..", import.meta.url));

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return tsFiles(path);
    return d.name.endsWith(".ts") && !d.name.endsWith(".d.ts") ? [path] : [];
  });
}

export interface Installed {
  /** A temp dir holding the build and the `forkpoint` symlink; removed by `remove`. */
  dir: string;
  /** The symlink npm would make: `node_modules/.bin/forkpoint` → `dist/cli/main.js`. */
  bin: string;
  run(args: string[], options?: { input?: string; env?: NodeJS.ProcessEnv; cwd?: string }): SpawnSyncReturns<string>;
  remove(): void;
}

/** Compiles src/ into a temp package (its package.json, drizzle/ and node_modules linked) and links the binary. */
export async function installCli(): Promise<Installed> {
  const dir = mkdtempSync(join(tmpdir(), "forkpoint-bin-"));
  const pkg = join(dir, "package");
  // Only the files the command reaches (and the demo's tools module), found by a bundling pass that writes nothing:
  // the adapters' sources are not the CLI's business.
  const entries = ["src/cli/main.ts", "src/cli/demo/tools.ts"];
  const { metafile } = await build({
    entryPoints: entries,
    absWorkingDir: repo,
    bundle: true,
    write: false,
    metafile: true,
    packages: "external",
    format: "esm",
    platform: "node",
    target: "node20",
    logLevel: "silent",
    outdir: "unused",
  });
  const reached = Object.keys(metafile.inputs).filter((f) => f.startsWith("src/") && tsFiles(join(repo, "src")).includes(join(repo, f)));
  await build({
    entryPoints: reached,
    absWorkingDir: repo,
    outdir: join(pkg, "dist"),
    outbase: "src",
    bundle: false,
    format: "esm",
    platform: "node",
    target: "node20",
    logLevel: "warning",
  });
  for (const name of ["package.json", "drizzle", "node_modules"]) symlinkSync(join(repo, name), join(pkg, name));
  mkdirSync(join(dir, "bin"));
  const bin = join(dir, "bin", "forkpoint");
  symlinkSync(join(pkg, "dist", "cli", "main.js"), bin);
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

/** Runs `command` under a pseudo-terminal (util-linux `script`): stdout and stderr are a TTY, merged into one. */
export function runInTerminal(command: string[], env: NodeJS.ProcessEnv = {}): { status: number | null; output: string } {
  const quoted = command.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  const r = spawnSync("script", ["-qec", quoted, "/dev/null"], {
    encoding: "utf8",
    env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: "xterm", COLUMNS: "120", ...env },
  });
  return { status: r.status, output: r.stdout };
}
