// Transpiles src/ and bench/ to plain JavaScript in .bench-build/, so the measured child processes run on Node alone.
// Under the tsx loader every process carries its loader thread (33 MB of RSS here, before any work): that is the
// development setup's cost, not forkpoint's, and a library user runs compiled JavaScript.
import { build, type BuildFailure } from "esbuild";
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
  const entries = [...tsFiles(join(root, "src")), ...tsFiles(join(root, "bench"))].map((f) => relative(root, f));
  // A source file esbuild cannot parse (an engine mid-refactor) is left out, with a warning, rather than failing every
  // job: only the jobs that import it fail (each with its own error), and the others still run.
  const skipped = new Map<string, string>();
  for (;;) {
    try {
      await build({
        entryPoints: entries.filter((f) => !skipped.has(f)),
        absWorkingDir: root,
        outdir: out,
        outbase: ".",
        bundle: false,
        format: "esm",
        platform: "node",
        target: "node20",
        logLevel: "silent",
      });
      break;
    } catch (e) {
      const errors = (e as BuildFailure).errors ?? [];
      const fresh = errors.filter((x) => x.location && !skipped.has(x.location.file));
      if (!fresh.length) throw e;
      for (const x of fresh) skipped.set(x.location!.file, `${x.location!.line}:${x.location!.column}: ${x.text}`);
    }
  }
  for (const [file, why] of skipped) console.error(`compile: left out ${file} (esbuild: ${why}); jobs that import it will fail`);
  // The migrations are read from `../../drizzle` relative to src/store/, as in dist/.
  if (!existsSync(join(out, "drizzle"))) symlinkSync(join(root, "drizzle"), join(out, "drizzle"), "dir");
  return out;
}
