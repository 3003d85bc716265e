// The packed tarball installed by npm from the registry beside today's frameworks (ai 7, the latest OpenAI Agents,
// LangGraph and LangChain core) with strict peers, and the examples of the README and every guide, adapters included,
// type-checked and run there as written.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { documents, missingOutput, needsPostgres, programOf } from "../docs/code-blocks.js";
import { freshPgDatabase, pgServer } from "../fixtures/postgres-database.js";
import { runPack, repo, run, type Packed } from "./packed.js";

/** What a user on today's stack installs beside forkpoint (the guides' examples import each). */
const FRAMEWORKS = [
  "ai@^7",
  "@openai/agents@latest",
  "@langchain/langgraph@latest",
  "@langchain/core@latest",
  "zod",
  "pg",
  "@types/node@22",
];

let packed: Packed;
beforeAll(async () => {
  packed = await runPack();
}, 180_000);
afterAll(() => packed?.remove());

describe("installed from the registry beside today's frameworks", () => {
  it("npm installs it with strict peer dependencies, and the guides' examples compile and run under plain node", async () => {
    const app = join(packed.dir, "registry");
    mkdirSync(app);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }));
    // A peer range that excludes any of these makes npm refuse the install (ERESOLVE), which fails the test.
    const install = (...cache: string[]) =>
      run(
        "npm",
        ["install", "--strict-peer-deps", ...cache, "--no-audit", "--no-fund", "--loglevel=error", packed.tarball, ...FRAMEWORKS],
        { cwd: app },
      );
    try {
      install("--prefer-offline");
    } catch (error) {
      // A cached package document older than a release that depends on a newer version of it (ETARGET): asked again.
      if (!String(error).includes("ETARGET")) throw error;
      install("--prefer-online");
    }
    const installed = (name: string) =>
      (JSON.parse(readFileSync(join(app, "node_modules", name, "package.json"), "utf8")) as { version: string }).version;
    expect(installed("ai")).toMatch(/^7\./);
    expect(installed("better-sqlite3")).toMatch(/^13\./);

    // Each document's examples as one module of its own, in a directory of its own (they open files by relative paths).
    const programs = documents()
      .map((doc) => ({ doc, program: programOf(doc), dir: join(app, "examples", basename(doc, ".md")) }))
      .filter(({ program }) => program.blocks > 0);
    expect(programs.map((p) => p.doc)).toEqual(expect.arrayContaining(["README.md", "docs/ai-sdk.md", "docs/langgraph.md"]));
    for (const { program, dir } of programs) {
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, "example.ts"), program.source);
    }
    // As a strict TypeScript 7 consumer compiles them (no skipLibCheck): the examples type-check as written.
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          module: "nodenext",
          target: "ES2023",
          lib: ["ES2023", "DOM", "esnext.disposable"],
          types: ["node"],
          strict: true,
          noEmit: true,
        },
        include: ["examples/*/example.ts"],
      }),
    );
    run(process.execPath, [join(repo, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.json"], { cwd: app });
    const databaseUrl = (await pgServer()) ? await freshPgDatabase() : "";
    // Node strips the examples' types itself: no build step, nothing of this repository's node_modules. Node 22 has no
    // `await using` syntax yet (24 does), so there the examples run through tsx, as a Node 22 user runs them.
    const plain = Number(process.versions.node.split(".")[0]) >= 24;
    const loader = pathToFileURL(join(repo, "node_modules", "tsx", "dist", "loader.mjs")).href;
    const args = plain ? ["example.ts"] : ["--import", loader, "example.ts"];
    for (const { doc, program, dir } of programs) {
      if (needsPostgres(program) && !databaseUrl) continue; // pgServer() warned (or, under CI, threw)
      const out = run(process.execPath, args, { cwd: dir, env: { ...process.env, DATABASE_URL: databaseUrl } });
      expect(missingOutput(out, program.expected), `${doc} printed:\n${out}`).toEqual([]);
    }
  }, 300_000);
});
