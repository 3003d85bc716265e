// The packed tarball, installed into fresh projects: what it holds, a strict TypeScript consumer, require(), a bundle.
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import ts from "@typescript/typescript6";
import { installInto, runPack, repo, run, type Packed } from "./packed.js";
import { MAIN_EXPORTS, MAIN_VALUES } from "./public-names.js";

const tsc = join(repo, "node_modules", "typescript", "bin", "tsc");

/** A strict consumer, and no skipLibCheck: every .d.ts the package reaches is checked. */
const STRICT_TSCONFIG = {
  compilerOptions: {
    module: "nodenext",
    moduleResolution: "nodenext",
    target: "ES2022",
    lib: ["ES2022"],
    // TypeScript 6+ loads no @types package unless named (its `types` default is []): a Node consumer names node.
    types: ["node"],
    strict: true,
    noUncheckedIndexedAccess: true,
    verbatimModuleSyntax: true,
    outDir: "out",
  },
  include: ["main.ts"],
};
/** Stricter still for forkpoint's own API (LangChain's own declarations do not compile with exactOptionalPropertyTypes). */
const STRICTEST_TSCONFIG = {
  ...STRICT_TSCONFIG,
  compilerOptions: { ...STRICT_TSCONFIG.compilerOptions, exactOptionalPropertyTypes: true, noImplicitOverride: true },
};

/** The public API as a user writes it: `await using`, typed events, the logger, errors. */
const PLAIN_CONSUMER = `
import { openForkpoint, defineTool, ForkpointError, NotFoundError, type Forkpoint, type ForkpointLogger, type MoveResult, type SessionExport } from "forkpoint";

const logger: ForkpointLogger = { warn: (message) => console.log("warn:", message) };
const note = defineTool<{ text: string }, { ok: boolean }>({ name: "note", run: () => ({ ok: true }), undo: () => undefined });
let kept: Forkpoint;
{
  await using fp = openForkpoint({ path: "./app.db", tools: [note], logger });
  kept = fp;
  const moves: string[] = [];
  fp.on("rollback", (move) => moves.push(move.branch.id));
  // Checked by the compiler only (never called): each event's payload has its own type.
  const typed = (): void => {
    // @ts-expect-error: a checkpoint listener gets a Checkpoint, not a move
    fp.on("checkpoint", (move: MoveResult) => move.undone);
    // @ts-expect-error: there is no such event
    fp.on("rolledback", () => undefined);
    fp.on("edit", (move) => move.message.content);
  };
  void typed;
  const s = await fp.createSession({ userId: "alice", title: "Trip" });
  const cp = await s.checkpoint({ name: "start" });
  await s.append({ role: "user", content: "hi" });
  await s.invoke("note", { text: "x" });
  const move = await s.rollback(cp.id);
  console.log("undone", move.undone.length, "events", moves.length);
  const doc: SessionExport = await fp.exportSession(s.id, { userId: "alice" });
  console.log("branches", doc.branches.length);
  try {
    await fp.getSession("nope", { userId: "alice" });
  } catch (e) {
    if (e instanceof NotFoundError && e instanceof ForkpointError) console.log("not found", e.code);
  }
}
await kept.listSessions({ userId: "alice" }).catch((e: ForkpointError) => console.log("after the block:", e.code));
`;

const LANGGRAPH_CONSUMER = `
import { openForkpoint } from "forkpoint";
import { ForkpointSaver } from "forkpoint/langgraph";

const fp = openForkpoint({ path: "./graph.db" });
const saver = new ForkpointSaver(fp);
const tuple = await saver.getTuple({ configurable: { thread_id: "t1" } });
console.log("tuple", tuple === undefined ? "none" : "some");
await fp.close();
`;

const REQUIRE_CONSUMER = `
const { openForkpoint, ValidationError } = require("forkpoint");
(async () => {
  const fp = openForkpoint({ path: "./required.db" });
  const s = await fp.createSession({ userId: "alice" });
  await s.append({ role: "user", content: "hi" });
  console.log("required", (await s.history()).length, typeof ValidationError);
  await fp.close();
})();
`;

const BUNDLED_APP = `
import { openForkpoint } from "forkpoint";
const fp = openForkpoint({ path: process.argv[2] });
const s = await fp.createSession({ userId: "alice" });
await s.append({ role: "user", content: "hi" });
const cp = await s.checkpoint();
console.log("bundled", (await s.history()).length, (await fp.verify()).ok, cp.position);
await fp.close();
`;

/** A store author's side: the port's types and helpers from `forkpoint/store`, given to `openForkpoint({ store })`. */
const STORE_CONSUMER = `
import { openForkpoint, type ForkpointOptions } from "forkpoint";
import { RequestTakenError, runAsync, runSync, type Step, type Store, type Tx } from "forkpoint/store";

function* answer(tx?: Tx): Step<number> {
  void tx;
  return 42;
}
/** A store that counts the units of work it runs, around another store. */
function counting(inner: Store): Store & { units: number } {
  const outer = Object.create(inner) as Store & { units: number };
  outer.units = 0;
  outer.write = (scope, body) => (outer.units++, inner.write(scope, body));
  outer.read = (body) => (outer.units++, inner.read(body));
  outer.query = (body) => (outer.units++, inner.query(body));
  return outer;
}
const options: ForkpointOptions = { store: counting({} as Store) };
void options;
void openForkpoint;
console.log("store", runSync(answer()), await runAsync(answer()), typeof RequestTakenError);
`;

/** \`postgres\` as typed with @types/pg installed: a connection string, a pg.PoolConfig or a pg.Pool, nothing else. */
const POSTGRES_CONSUMER = `
import pg from "pg";
import type { ForkpointOptions } from "forkpoint";

const targets: ForkpointOptions[] = [
  { postgres: "postgres://app@db/forkpoint" },
  { postgres: { connectionString: "postgres://app@db/forkpoint", max: 4 } },
  { postgres: new pg.Pool({ max: 2 }) },
];
// @ts-expect-error: a pg.PoolConfig's max is a number
const wrongField: ForkpointOptions = { postgres: { max: "four" } };
// @ts-expect-error: a number is no connection target
const wrongKind: ForkpointOptions = { postgres: 5432 };
console.log("targets", targets.length, wrongField === wrongKind);
`;

/** The names a module's declarations export, types and values, sorted, as TypeScript reads them. */
function exportedNames(declarations: string): string[] {
  const program = ts.createProgram([declarations], {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    types: [],
    noEmit: true,
  });
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(declarations)!)!;
  return checker
    .getExportsOfModule(module)
    .map((s) => s.name)
    .sort();
}

let packed: Packed;
beforeAll(async () => {
  packed = await runPack();
}, 120_000);
afterAll(() => packed?.remove());

describe("the packed tarball", () => {
  it("holds the build, README, the guides (the CLI's help names docs/mcp.md), LICENSE and package.json; no source maps without sources, no drizzle snapshots", () => {
    const { files } = packed;
    expect(files).toEqual(
      expect.arrayContaining([
        "package.json",
        "README.md",
        "LICENSE",
        "dist/index.js",
        "dist/index.d.ts",
        "dist/cli/main.js",
        "docs/mcp.md",
      ]),
    );
    // forkpoint ui's page, built: its server and the assets it serves.
    expect(files).toEqual(expect.arrayContaining(["dist/ui/server.js", "dist/web/index.html"]));
    expect(files.filter((f) => f.startsWith("dist/web/assets/") && f.endsWith(".js"))).toHaveLength(1);
    expect(files.filter((f) => /(^|\/)meta\/.*_snapshot\.json$/.test(f))).toEqual([]);
    // The drizzle schemas only generate migrations (drizzle-orm is a devDependency): none is shipped.
    expect(
      files.filter((f) => /^dist\/store\/(sqlite|postgres)\/(schema|schema-langgraph|schema-workspaces|column-types)\.js$/.test(f)),
    ).toEqual([]);
    for (const map of files.filter((f) => f.endsWith(".map"))) {
      const sources = (JSON.parse(run("tar", ["-xzOf", packed.tarball, `package/${map}`])) as { sources: string[] }).sources;
      for (const source of sources) expect(files, `${map} points at ${source}`).toContain(join(map, "..", source));
    }
    // Only the public API's types and the store port's (forkpoint/store): no store's own declarations, no driver's.
    expect(files.filter((f) => f.endsWith(".d.ts") && /store|sqlite|postgres/.test(f))).toEqual(["dist/store/port/index.d.ts"]);
    const license = run("tar", ["-xzOf", packed.tarball, "package/LICENSE"]);
    expect(license).toContain("MIT License");
    expect(license).toContain("forkpoint contributors");
  });

  it("says where it comes from, and installing it runs no build of ours", () => {
    const m = packed.manifest;
    expect(m.license).toBe("MIT");
    expect(m.repository).toMatchObject({ url: expect.stringContaining("github.com/forkpoint/forkpoint") });
    expect(m.homepage).toEqual(expect.stringContaining("github.com/forkpoint/forkpoint"));
    expect(m.bugs).toMatchObject({ url: expect.stringContaining("github.com/forkpoint/forkpoint/issues") });
    expect(m.keywords).toEqual(expect.arrayContaining(["sqlite", "checkpoint", "rollback"]));
    for (const hook of ["preinstall", "install", "postinstall", "prepare"]) expect(m.scripts ?? {}).not.toHaveProperty(hook);
  });
});

describe("the declared API", () => {
  // Store-internal names (CallsTx, LgBlobRow, runSync, ...) once leaked into the main entry: each is forkpoint/store's.
  it("the main entry exports the public API and nothing else, as types and as values", () => {
    const app = installInto(packed, join(packed.dir, "names"), { type: "module" });
    expect(exportedNames(join(app, "node_modules", "forkpoint", "dist", "index.d.ts"))).toEqual(MAIN_EXPORTS);
    const values = run(
      process.execPath,
      ["--input-type=module", "-e", `console.log(JSON.stringify(Object.keys(await import("forkpoint")).sort()))`],
      { cwd: app },
    );
    expect(JSON.parse(values)).toEqual(MAIN_VALUES);
  });

  it("forkpoint/store gives store authors the port: its types compile against the main entry's, its helpers run", () => {
    const app = installInto(packed, join(packed.dir, "store"), { type: "module", extra: ["@types/node"] });
    const names = exportedNames(join(app, "node_modules", "forkpoint", "dist", "store", "port", "index.d.ts"));
    expect(names).toEqual(
      expect.arrayContaining(["Store", "Tx", "Step", "Body", "WriteScope", "StoreCapabilities", "runSync", "runAsync"]),
    );
    expect(names.filter((n) => MAIN_EXPORTS.includes(n))).toEqual([]);
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify(STRICTEST_TSCONFIG));
    writeFileSync(join(app, "main.ts"), STORE_CONSUMER);
    run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: app });
    expect(run(process.execPath, ["out/main.js"], { cwd: app })).toBe("store 42 42 function\n");
  }, 120_000);

  it("openForkpoint({ postgres }) is typed as pg's own PoolConfig and Pool where @types/pg is installed", () => {
    const app = installInto(packed, join(packed.dir, "postgres"), {
      type: "module",
      extra: ["@types/node", "@types/pg", "pg", "pg-protocol", "pg-types"],
    });
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify(STRICTEST_TSCONFIG));
    writeFileSync(join(app, "main.ts"), POSTGRES_CONSUMER);
    run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: app });
    // Without @types/pg (the strict consumer below has none), the same declarations compile: the option takes any value.
  }, 120_000);
});

describe("installed into a fresh project", () => {
  it("a strict TypeScript consumer compiles and runs the public API without @langchain or better-sqlite3's types", () => {
    const app = installInto(packed, join(packed.dir, "plain"), { type: "module", extra: ["@types/node"] });
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify(STRICTEST_TSCONFIG));
    writeFileSync(join(app, "main.ts"), PLAIN_CONSUMER);
    run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: app });
    const out = run(process.execPath, ["out/main.js"], { cwd: app });
    expect(out.split("\n")).toEqual(["undone 1 events 1", "branches 2", "not found NOT_FOUND", "after the block: CLOSED", ""]);
  }, 120_000);

  it("forkpoint/langgraph compiles and runs for a consumer that installed the LangChain peers", () => {
    const app = installInto(packed, join(packed.dir, "langgraph"), {
      type: "module",
      extra: ["@types/node", "@langchain/core", "@langchain/langgraph-checkpoint"],
    });
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify(STRICT_TSCONFIG));
    writeFileSync(join(app, "main.ts"), LANGGRAPH_CONSUMER);
    run(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: app });
    expect(run(process.execPath, ["out/main.js"], { cwd: app })).toBe("tuple none\n");
  }, 120_000);

  it('require("forkpoint") loads it from CommonJS (require(esm): no top-level await in what it loads)', () => {
    const app = installInto(packed, join(packed.dir, "cjs"), { type: "commonjs" });
    writeFileSync(join(app, "main.js"), REQUIRE_CONSUMER);
    expect(run(process.execPath, ["main.js"], { cwd: app })).toBe("required 1 function\n");
  });

  it("bundled by esbuild (better-sqlite3 left external), opens a database with no drizzle/ folder anywhere", async () => {
    const app = installInto(packed, join(packed.dir, "bundler"), { type: "module" });
    writeFileSync(join(app, "main.js"), BUNDLED_APP);
    // The bundle runs from a folder of its own, next to nothing but the native driver.
    const deploy = join(packed.dir, "deploy");
    mkdirSync(join(deploy, "node_modules"), { recursive: true });
    symlinkSync(join(repo, "node_modules", "better-sqlite3"), join(deploy, "node_modules", "better-sqlite3"), "dir");
    await build({
      entryPoints: [join(app, "main.js")],
      absWorkingDir: app,
      outfile: join(deploy, "app.mjs"),
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node22",
      external: ["better-sqlite3"],
      logLevel: "silent",
    });
    expect(readFileSync(join(deploy, "app.mjs"), "utf8")).not.toMatch(/from "drizzle-orm|require\("drizzle-orm/);
    const db = join(deploy, "bundled.db");
    expect(run(process.execPath, ["app.mjs", db], { cwd: deploy })).toBe("bundled 1 true 1\n");
    expect(existsSync(join(deploy, "drizzle"))).toBe(false);
  });
});
