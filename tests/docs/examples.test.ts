// Every `ts` example of the README and the guides, each document run in order as one program against the package
// source, printing what its `//=> ` comments say. In the postgres projects, each `path` they open is a PostgreSQL database.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { transformSync } from "esbuild";
import { afterAll, describe, expect, it } from "vitest";
import { onPostgres } from "../fixtures/backend.js";
import { compiledScript } from "../fixtures/compiled.js";
import { freshPgDatabase, pgServer } from "../fixtures/postgres-database.js";
import { documents, missingOutput, needsPostgres, programOf, repo } from "./code-blocks.js";

// Inside the project (ignored by git) so that `--import tsx` and the frameworks resolve from its node_modules.
mkdirSync(join(repo, ".tmp"), { recursive: true });
const dir = mkdtempSync(join(repo, ".tmp", "docs-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** `from "forkpoint/<sub>"` for each entry of package.json's exports, as the package's source file. */
function sourceOfEntries(): Array<[string, string]> {
  const pkg = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")) as { exports: Record<string, string | { types?: string }> };
  const entries: Array<[string, string]> = [];
  for (const [key, target] of Object.entries(pkg.exports)) {
    if (typeof target === "string" || !target.types) continue;
    const specifier = key === "." ? "forkpoint" : `forkpoint/${key.slice(2)}`;
    const source = target.types.replace(/^\.\/dist\//, "src/").replace(/\.d\.ts$/, ".ts");
    // The main entry on the store under test: on PostgreSQL, each `path` an example opens is a database of the server's.
    const file = join(repo, key === "." && onPostgres ? "tests/fixtures/forkpoint-under-test.ts" : source);
    entries.push([specifier, compiledScript(file) ?? file]);
  }
  return entries;
}

const docs = documents()
  .map((doc) => ({ doc, program: programOf(doc) }))
  .filter(({ program }) => program.blocks > 0);

describe("the documents' examples", () => {
  it("are in the README and the guides", () => {
    expect(docs.map((d) => d.doc)).toEqual(expect.arrayContaining(["README.md", "docs/chat-apps.md", "docs/langgraph.md"]));
  });

  it.each(docs)("$doc runs as written and prints what its comments say", async ({ doc, program }) => {
    // The PostgreSQL examples run on the test server; without one (and without CI) they are skipped, loudly.
    let databaseUrl = "";
    if (needsPostgres(program)) {
      if (!(await pgServer())) return console.warn(`!!! ${doc}: no PostgreSQL test server, its examples are SKIPPED`);
      databaseUrl = await freshPgDatabase();
    }
    let source = program.source;
    for (const [specifier, file] of sourceOfEntries()) source = source.replaceAll(`from "${specifier}"`, `from ${JSON.stringify(file)}`);
    const cwd = join(dir, basename(doc, ".md"));
    mkdirSync(cwd);
    // On the run's compiled copy of the package, the example alone is compiled, for the Node running it (Node 22 has no
    // `await using`): no tsx compiling src/.
    const compiled = sourceOfEntries().every(([, entry]) => entry.endsWith(".js"));
    const file = join(cwd, compiled ? "example.mjs" : "example.ts");
    const target = `node${process.versions.node}`;
    writeFileSync(file, compiled ? transformSync(source, { loader: "ts", format: "esm", target }).code : source);
    const out = execFileSync(process.execPath, compiled ? [file] : ["--import", "tsx", file], {
      cwd,
      encoding: "utf8",
      env: { ...process.env, DATABASE_URL: databaseUrl },
    });
    expect(program.expected.length).toBeGreaterThan(0);
    expect(missingOutput(out, program.expected), `${doc} printed:\n${out}`).toEqual([]);
  });
});
