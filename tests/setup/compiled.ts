// Vitest global setup: src/ and the test fixtures compiled to JavaScript once per run, so that child processes (workers,
// crash loops, the CLI) start on plain `node` instead of each compiling TypeScript through tsx (~1 s a process here).
// The tree is laid out as the package is (src/ as dist/), see tests/fixtures/compiled.ts.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** The compiled tree (tests/fixtures/compiled.ts reads it); empty when it could not be built. */
    compiledRoot: string;
  }
}

const repo = fileURLToPath(new URL("../..", import.meta.url));

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const file = path.join(dir, d.name);
    if (d.isDirectory()) return tsFiles(file);
    return d.name.endsWith(".ts") && !d.name.endsWith(".d.ts") ? [file] : [];
  });
}

/** One JavaScript file per source file (imports untouched, as tsc lays out dist/): src/ into dist/, tests/ and examples/ beside. */
async function compileTree(root: string): Promise<void> {
  fs.rmSync(root, { recursive: true, force: true });
  fs.mkdirSync(root);
  const options = { absWorkingDir: repo, bundle: false, format: "esm", platform: "node", target: "node20", logLevel: "warning" } as const;
  await Promise.all([
    build({ ...options, entryPoints: tsFiles(path.join(repo, "src")), outbase: "src", outdir: path.join(root, "dist") }),
    build({
      ...options,
      // Every test module a child may start or import (fixtures, helpers), and the examples: the suites run in vitest only.
      entryPoints: [...tsFiles(path.join(repo, "tests")).filter((f) => !f.endsWith(".test.ts")), ...tsFiles(path.join(repo, "examples"))],
      outbase: ".",
      outdir: root,
    }),
  ]);
  // The fixtures import ../../src/…: the same modules as dist/ (Node follows the link to its real path).
  fs.symlinkSync("dist", path.join(root, "src"), "dir");
  for (const name of ["package.json", "drizzle", "node_modules"]) fs.symlinkSync(path.join(repo, name), path.join(root, name));
}

export default async function setup(project: TestProject) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "forkpoint-compiled-"));
  // The package suites' shared pack (tests/package/packed.ts), made by the first of them that runs.
  const pack = `${root}-pack`;
  const compile = async () => {
    fs.rmSync(pack, { recursive: true, force: true });
    try {
      await compileTree(root);
      project.provide("compiledRoot", root);
    } catch (error) {
      console.error(`tests/setup/compiled.ts: cannot compile the tree, child processes load TypeScript through tsx: ${String(error)}`);
      project.provide("compiledRoot", "");
    }
  };
  await compile();
  // Watch mode: a rerun's children run the sources as they are now.
  project.onTestsRerun(compile);
  return () => {
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(pack, { recursive: true, force: true });
  };
}
