// The API reference in docs/api/: TypeDoc (Markdown) over each public entry of package.json's `exports`.
// `node scripts/api-docs.mjs` writes it; `--check` writes it elsewhere and fails when docs/api/ differs (a stale reference).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import module from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");
const committed = join(root, "docs", "api");

// TypeDoc reads the sources with TypeScript's compiler API, which typescript@7 (the project's compiler) does not ship:
// it gets TypeScript 6's instead, as rollup-plugin-dts does (package.json's overrides keep npm from refusing the peer).
const TS6 = "@typescript/typescript6";
if (module.registerHooks) {
  module.registerHooks({ resolve: (specifier, context, next) => next(specifier === "typescript" ? TS6 : specifier, context) });
} else {
  const hook = `export async function resolve(s, c, next) { return next(s === "typescript" ? ${JSON.stringify(TS6)} : s, c); }`;
  module.register(`data:text/javascript,${encodeURIComponent(hook)}`, import.meta.url);
}
const { Application, LogLevel } = await import("typedoc");

/** Each public entry of package.json's `exports`: its import specifier, and its source (`./dist/x/index.d.ts` is `src/x/index.ts`). */
function publicEntries() {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
  return Object.entries(pkg.exports)
    .filter(([, target]) => typeof target === "object" && target.types)
    .map(([key, target]) => ({
      specifier: key === "." ? "forkpoint" : `forkpoint/${key.slice(2)}`,
      source: join(root, target.types.replace(/^\.\/dist\//, "src/").replace(/\.d\.ts$/, ".ts")),
    }));
}

async function generate(out) {
  const app = await Application.bootstrapWithPlugins({
    entryPoints: publicEntries().map((e) => e.source),
    tsconfig: join(root, "tsconfig.build.json"),
    plugin: ["typedoc-plugin-markdown"],
    out,
    readme: "none",
    name: "forkpoint",
    // What the declarations ship: `@internal` is stripped from them (tsconfig.build.json), so it is left out here.
    excludeInternal: true,
    excludePrivate: true,
    excludeProtected: true,
    // No "Defined in file:line": the reference changes with the API and its comments, not with every edit of src/.
    disableSources: true,
    gitRevision: "main",
    hidePageHeader: true,
    hideBreadcrumbs: true,
    useCodeBlocks: true,
    parametersFormat: "table",
    interfacePropertiesFormat: "table",
    classPropertiesFormat: "table",
    typeDeclarationFormat: "table",
    enumMembersFormat: "table",
    sanitizeComments: true,
    logLevel: LogLevel.Warn,
    treatWarningsAsErrors: false,
    // No type check of the whole program first (~half of a run's CPU): \`npm run lint\` is the type check. It decides the
    // order TypeDoc prints a union's members in, so the committed reference is made with it off too.
    skipErrorChecking: true,
  });
  const project = await app.convert();
  if (!project || app.logger.hasErrors()) throw new Error("TypeDoc could not convert the public entries");
  // Each module named as it is imported ("forkpoint/ai"), not after its file ("ai", "index").
  const entries = publicEntries();
  // TypeDoc names a module after its entry's path under the entries' common directory, without `/index`: "index" for
  // src/index.ts, "ai" for src/ai/index.ts, "store/port" for src/store/port/index.ts.
  let common = dirname(entries[0].source);
  for (const e of entries) while (!`${dirname(e.source)}/`.startsWith(`${common}/`)) common = dirname(common);
  const fileName = (e) =>
    relative(common, e.source)
      .replace(/\.ts$/, "")
      .replace(/\/index$/, "");
  for (const mod of project.children ?? []) {
    const entry = entries.find((e) => fileName(e) === mod.name);
    if (!entry) throw new Error(`a module of no public entry: ${mod.name}`);
    mod.name = entry.specifier;
  }
  // In the order of package.json's `exports`: the main entry first.
  const order = (mod) => entries.findIndex((e) => e.specifier === mod.name);
  project.children?.sort((a, b) => order(a) - order(b));
  for (const group of project.groups ?? []) group.children.sort((a, b) => order(a) - order(b));
  rmSync(out, { recursive: true, force: true });
  await app.generateOutputs(project);
}

/** Every file under `dir`, relative to it, with its text. */
function tree(dir) {
  const files = new Map();
  const walk = (at) => {
    for (const d of readdirSync(at, { withFileTypes: true })) {
      const path = join(at, d.name);
      if (d.isDirectory()) walk(path);
      else files.set(relative(dir, path), readFileSync(path, "utf8"));
    }
  };
  walk(dir);
  return files;
}

if (process.argv.includes("--check")) {
  const scratch = mkdtempSync(join(tmpdir(), "forkpoint-api-"));
  try {
    await generate(join(scratch, "api"));
    const fresh = tree(join(scratch, "api"));
    let now;
    try {
      now = tree(committed);
    } catch {
      now = new Map();
    }
    const stale = [...new Set([...fresh.keys(), ...now.keys()])].filter((f) => fresh.get(f) !== now.get(f)).sort();
    if (stale.length > 0) {
      console.error(`docs/api is stale (${stale.length} file(s) differ: ${stale.slice(0, 10).join(", ")}): run \`npm run docs:api\``);
      process.exitCode = 1;
    } else console.log(`docs/api is current (${fresh.size} files)`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
} else {
  await generate(committed);
  console.log(`wrote ${relative(root, committed)}/ (${tree(committed).size} files)`);
}
