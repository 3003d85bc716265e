// Transpiles src/ and bench/ to plain JavaScript in .bench-build/, so the measured child processes run on Node alone.
// Under the tsx loader every process carries its loader thread (33 MB of RSS here, before any work): that is the
// development setup's cost, not forkpoint's, and a library user runs compiled JavaScript.
import { build } from "esbuild";
import { existsSync, readdirSync, rmSync, symlinkSync } from "node:fs";
import { join, relative } from "node:path";

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name);
    if (d.isDirectory()) return tsFiles(path);
    return d.name.endsWith(".ts") && !d.name.endsWith(".d.ts") ? [path] : [];
  });
}

/** Writes `<root>/.bench-build/{src,bench}/**.js` (one file per source file, imports unchanged); returns the build dir. */
export async function compileBench(root: string): Promise<string> {
  const out = join(root, ".bench-build");
  rmSync(out, { recursive: true, force: true });
  await build({
    entryPoints: [...tsFiles(join(root, "src")), ...tsFiles(join(root, "bench"))].map((f) => relative(root, f)),
    absWorkingDir: root,
    outdir: out,
    outbase: ".",
    bundle: false,
    format: "esm",
    platform: "node",
    target: "node20",
    logLevel: "warning",
  });
  // The migrations are read from `../../drizzle` relative to src/store/, as in dist/.
  if (!existsSync(join(out, "drizzle"))) symlinkSync(join(root, "drizzle"), join(out, "drizzle"), "dir");
  return out;
}
