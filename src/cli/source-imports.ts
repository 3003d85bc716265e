// From a clone (the CLI run from its TypeScript source through tsx), `forkpoint` imports resolve to that source.
import { existsSync, readFileSync } from "node:fs";
import * as nodeModule from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * The resolve hook for Node before 22.15 (no `registerHooks`), as a module of its own, which Node runs off the main
 * thread: a specifier in the map resolves to its file, and everything else as before (tsx's hooks, then Node's).
 */
const HOOK = `
let map = {};
export function initialize(data) { map = data; }
export function resolve(specifier, context, next) {
  return next(Object.hasOwn(map, specifier) ? map[specifier] : specifier, context);
}`;

let registered = false;

/**
 * The package's own entries (`forkpoint`, `forkpoint/ai`, ...) mapped to the source files that the build compiles into
 * what package.json exports: `./dist/ai/index.js` is built from `src/ai/index.ts`.
 */
function sourceEntries(root: URL): Record<string, string> {
  const pkg = JSON.parse(readFileSync(new URL("package.json", root), "utf8")) as {
    name: string;
    exports: Record<string, string | { import?: string }>;
  };
  const map: Record<string, string> = {};
  for (const [key, target] of Object.entries(pkg.exports)) {
    const built = typeof target === "string" ? target : target.import;
    const match = built && /^\.\/dist\/(.+)\.js$/.exec(built);
    if (!match) continue;
    const source = new URL(`src/${match[1]}.ts`, root);
    if (existsSync(fileURLToPath(source))) map[key === "." ? pkg.name : `${pkg.name}/${key.slice(2)}`] = source.href;
  }
  return map;
}

/**
 * When this CLI runs from its source (a clone, through tsx), makes the modules it loads next (a `--tools` module)
 * import `forkpoint` from that source: dist/, which the package name points at, exists only after `npm run build`,
 * and a tools module outside the clone could not find the package at all.
 * Compiled (an installed package), it does nothing: the name resolves as any dependency's does.
 */
export function importOwnSource(): void {
  // The process's own script too: a test runner loading this file from source is not a clone's CLI.
  if (registered || !import.meta.url.endsWith(".ts") || !/\.[cm]?ts$/.test(process.argv[1] ?? "")) return;
  registered = true;
  const map = sourceEntries(new URL("../../", import.meta.url));
  // In-thread hooks see require() too: tsx loads a .ts module outside any `"type": "module"` package as CommonJS.
  if (typeof nodeModule.registerHooks === "function") {
    nodeModule.registerHooks({
      resolve: (specifier, context, next) => next(Object.hasOwn(map, specifier) ? map[specifier]! : specifier, context),
    });
  } else {
    nodeModule.register(`data:text/javascript,${encodeURIComponent(HOOK)}`, { data: map });
  }
}
