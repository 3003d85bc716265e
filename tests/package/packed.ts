// The package as npm publishes it: `npm pack` of a copy of this project (its prepack builds dist/), installed into
// fresh projects the way npm lays it out, without the network: the tarball unpacked into node_modules/forkpoint, and
// each package it needs linked from this repository's node_modules (better-sqlite3's native build included).
import { execFileSync, type ExecFileSyncOptions } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { inject } from "vitest";

export const repo = resolve(import.meta.dirname, "../..");

/** What the build needs; everything else in the repository plays no part in the tarball. */
const BUILD_INPUTS = ["package.json", "tsconfig.json", "tsconfig.build.json", "README.md", "LICENSE", "docs", "src", "scripts", "ui"];

export interface Packed {
  /** A temp dir outside the repository (no node_modules above it), removed by `remove`. */
  dir: string;
  tarball: string;
  /** The paths in the tarball, without its `package/` prefix. */
  files: string[];
  /** package.json as packed. */
  manifest: PackageJson;
  remove(): void;
}

export interface PackageJson {
  name: string;
  dependencies?: Record<string, string>;
  scripts?: Record<string, string>;
  [key: string]: unknown;
}

/** Runs a command quietly; on failure the error carries its output. */
export function run(command: string, args: string[], options: ExecFileSyncOptions = {}): string {
  try {
    return execFileSync(command, args, { encoding: "utf8", stdio: "pipe", ...options }) as string;
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${command} ${args.join(" ")} failed:\n${e.stdout ?? ""}\n${e.stderr ?? ""}\n${e.message}`);
  }
}

/** Packs a copy of the project (so this checkout's dist/ is left alone) with its own `npm pack`, in `dir` (made empty). */
export function packProject(dir = mkdtempSync(join(tmpdir(), "forkpoint-pack-"))): Packed {
  const stage = join(dir, "stage");
  mkdirSync(stage);
  for (const name of BUILD_INPUTS) cpSync(join(repo, name), join(stage, name), { recursive: true });
  symlinkSync(join(repo, "node_modules"), join(stage, "node_modules"), "dir");
  const out = join(dir, "out");
  mkdirSync(out);
  run("npm", ["pack", "--pack-destination", out, "--loglevel", "error"], {
    cwd: stage,
    env: { ...process.env, npm_config_offline: "true" },
  });
  const tarball = join(
    out,
    readdirSync(out).find((f) => f.endsWith(".tgz"))!,
  );
  const files = run("tar", ["-tzf", tarball])
    .split("\n")
    .filter(Boolean)
    .map((f) => f.replace(/^package\//, ""));
  const manifest = JSON.parse(run("tar", ["-xzOf", tarball, "package/package.json"])) as PackageJson;
  return { dir, tarball, files, manifest, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * The run's pack, made once for the package suites that share it (packing builds the package: seconds of CPU), beside the
 * run's compiled tree, which tests/setup/compiled.ts removes with it; `remove` leaves it to that. Each suite installs into
 * directories of its own under `dir`. A pack of the caller's own when the run has no compiled tree.
 */
export async function runPack(): Promise<Packed> {
  const root = inject("compiledRoot");
  if (!root) return packProject();
  const dir = `${root}-pack`;
  const done = join(dir, "packed.json");
  const failed = join(dir, "failed");
  const shared = (packed: Omit<Packed, "remove">): Packed => ({ ...packed, remove: () => {} });
  try {
    mkdirSync(dir);
  } catch {
    // Another suite of this run is packing: its result, once it is written.
    for (;;) {
      if (existsSync(failed)) throw new Error(`the run's pack failed in another suite: ${readFileSync(failed, "utf8")}`);
      if (existsSync(done)) return shared(JSON.parse(readFileSync(done, "utf8")) as Omit<Packed, "remove">);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    const { remove: _, ...packed } = packProject(dir);
    writeFileSync(`${done}.tmp`, JSON.stringify(packed));
    renameSync(`${done}.tmp`, done);
    return shared(packed);
  } catch (error) {
    writeFileSync(failed, error instanceof Error ? error.message : String(error));
    throw error;
  }
}

/** Links `name` (a package of this repository's node_modules) into `project`'s node_modules. */
function link(project: string, name: string): void {
  const target = join(project, "node_modules", name);
  mkdirSync(dirname(target), { recursive: true });
  symlinkSync(join(repo, "node_modules", name), target, "dir");
}

/**
 * A fresh project at `dir` with the tarball installed and its dependencies linked, plus `extra` packages (types, optional
 * peers) the consumer itself would install. Nothing else: no devDependency of forkpoint is reachable from it.
 */
export function installInto(packed: Packed, dir: string, options: { type: "module" | "commonjs"; extra?: string[] }): string {
  const pkg = join(dir, "node_modules", "forkpoint");
  mkdirSync(pkg, { recursive: true });
  run("tar", ["-xzf", packed.tarball, "-C", pkg, "--strip-components=1"]);
  for (const name of [...Object.keys(packed.manifest.dependencies ?? {}), ...(options.extra ?? [])]) link(dir, name);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "consumer", private: true, type: options.type }));
  return dir;
}

export function readText(file: string): string {
  return readFileSync(file, "utf8");
}
