// Builds dist/: tsc's JavaScript, one declaration bundle per public entry (the public API only), and the web view's page.
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { rollup } from "rollup";
import { build as viteBuild } from "vite";
import { dts } from "rollup-plugin-dts";

const root = resolve(import.meta.dirname, "..");
const dist = join(root, "dist");
/** tsc's per-file declarations: they follow every import, internal ones too, so they are bundled and not shipped. */
const types = join(root, "build", "types");

type Exports = Record<string, string | { types?: string }>;

/** The `types` file of each public entry in package.json's `exports`, relative to dist/ without extension. */
function publicEntries(): Record<string, string> {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports: Exports };
  const entries: Record<string, string> = {};
  for (const target of Object.values(pkg.exports)) {
    if (typeof target === "string" || !target.types) continue;
    const name = relative(dist, join(root, target.types)).replace(/\.d\.ts$/, "");
    entries[name] = join(types, `${name}.d.ts`);
  }
  return entries;
}

/**
 * Optional peers whose types the main entry names (`openForkpoint({ postgres })` takes a `pg.Pool`), where a consumer
 * without them installed must still compile: their imports are marked `@ts-ignore`, as Vite marks its optional
 * preprocessors', so the types are exact with `@types/pg` and `any` without.
 */
const OPTIONAL_TYPES = ["pg"];

function optionalPeerImports(dir: string): void {
  const from = new RegExp(`^import (?:.* from )?'(?:${OPTIONAL_TYPES.join("|")})';$`, "gm");
  for (const file of readdirSync(dir, { recursive: true, encoding: "utf8" })) {
    if (!file.endsWith(".d.ts")) continue;
    const path = join(dir, file);
    const text = readFileSync(path, "utf8");
    const marked = text.replace(from, (line) => `// @ts-ignore: an optional peer's types, used when installed\n${line}`);
    if (marked !== text) writeFileSync(path, marked);
  }
}

rmSync(dist, { recursive: true, force: true });
rmSync(types, { recursive: true, force: true });
// typescript@7 exports no `bin/` subpath: its `tsc` is found from its package.json's `bin`.
const tscManifest = createRequire(import.meta.url).resolve("typescript/package.json");
const tsc = join(dirname(tscManifest), (JSON.parse(readFileSync(tscManifest, "utf8")) as { bin: { tsc: string } }).bin.tsc);
execFileSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json")], { stdio: "inherit" });

const bundle = await rollup({
  input: publicEntries(),
  plugins: [dts({ tsconfig: join(root, "tsconfig.build.json") })],
  // Packages (dependencies, optional peers, node:*) stay imports: their own types serve them.
  external: (id) => !id.startsWith(".") && !isAbsolute(id),
  onwarn(warning) {
    // A warning here is a declaration that may not be portable to consumers: fail rather than ship it.
    throw new Error(`declaration bundle: ${warning.message}`);
  },
});
await bundle.write({
  dir: dist,
  format: "es",
  entryFileNames: "[name].d.ts",
  chunkFileNames: (chunk) => `types/${chunk.name.replace(/\.d$/, "")}-[hash].d.ts`,
});
await bundle.close();
rmSync(dirname(types), { recursive: true, force: true });
optionalPeerImports(dist);

// The page `forkpoint ui` serves (ui/, Vite + React), built into dist/web/: shipped built, so users need none of its tools.
await viteBuild({ configFile: join(root, "ui", "vite.config.ts") });
