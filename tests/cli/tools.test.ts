// --tools: CLI moves undo and replay the calls of the tools a module exports; without it they refuse, naming --tools.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openForkpoint, type ToolDefinition } from "../../src/index.js";
import { dumpDatabase } from "../helpers.js";
import { installCli, repo, type Installed } from "./binary.js";

let cli: Installed;
let toolsModule = "";
beforeAll(async () => {
  cli = await installCli();
  // A plain ES module, as a user would write one: a named export and a default array (the same tool twice is taken once).
  toolsModule = join(cli.dir, "my-tools.mjs");
  writeFileSync(
    toolsModule,
    `import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
export const writeFile = {
  name: "write_file",
  run: ({ path, text }) => { const previous = existsSync(path) ? readFileSync(path, "utf8") : null; writeFileSync(path, text); return { path, previous }; },
  undo: ({ result }) => { if (result.previous === null) rmSync(result.path, { force: true }); else writeFileSync(result.path, result.previous); },
};
export default [writeFile];
`,
  );
});
afterAll(() => cli.remove());

/** A database whose session wrote a file through the tool after checkpoint "start"; returns its ids and paths. */
async function seeded(name: string) {
  const db = join(cli.dir, `${name}.db`);
  const file = join(cli.dir, `${name}.txt`);
  const { writeFile } = (await import(pathToFileURL(toolsModule).href)) as { writeFile: ToolDefinition };
  const fp = openForkpoint({ path: db, tools: [writeFile] });
  const s = await fp.createSession({ userId: "ann" });
  const start = await s.checkpoint({ name: "start" });
  await s.invoke("write_file", { path: file, text: "written" });
  await fp.close();
  return { db, file, sessionId: s.id, checkpointId: start.id };
}

describe("--tools", () => {
  it("without it, a rollback that must undo a reversible call is refused, naming --tools, and changes nothing", async () => {
    const { db, file, sessionId, checkpointId } = await seeded("refused");
    const before = dumpDatabase(db);
    const r = cli.run(["--db", db, "rollback", sessionId, checkpointId, "-u", "ann"]);
    expect(r.status).toBe(1);
    expect(r.stderr.split("\n")).toEqual([
      expect.stringMatching(
        /^error: this rollback must undo or replay 1 reversible tool call\(s\) \(write_file tc_\S+\) .*pass --tools \.\/my-tools\.js/,
      ),
      "",
    ]);
    expect(dumpDatabase(db)).toEqual(before);
    expect(readFileSync(file, "utf8")).toBe("written");
  });

  it("with it, the rollback undoes the call on disk, and a switch back replays it", async () => {
    const { db, file, sessionId, checkpointId } = await seeded("undone");
    const r = cli.run(["--db", db, "--json", "rollback", sessionId, checkpointId, "-u", "ann", "--tools", toolsModule]);
    expect(r.status).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(result.undone.map((t: { tool: string }) => t.tool)).toEqual(["write_file"]);
    expect(existsSync(file)).toBe(false);
    const back = cli.run(["--tools", toolsModule, "--db", db, "switch", sessionId, result.branch.parentId, "-u", "ann"]);
    expect(back.stdout).toMatch(/^now on branch br_\S+ at position 1\nreplayed      1\n  write_file tc_\S+ \{"path":.*\n$/);
    expect(readFileSync(file, "utf8")).toBe("written");
  });

  it("a rollback that leaves a file as it is (written by an undo past its call's files) says so", async () => {
    const ws = join(cli.dir, "logged");
    mkdirSync(ws);
    const logged = join(cli.dir, "logged-tools.mjs");
    writeFileSync(
      logged,
      `import { appendFileSync, rmSync, writeFileSync } from "node:fs";
export default [{
  name: "put",
  run: ({ path }) => { writeFileSync(path, "put"); return { path }; },
  undo: ({ result }) => { rmSync(result.path); appendFileSync(${JSON.stringify(join(ws, "undo.log"))}, "undone\\n"); },
}];
`,
    );
    const db = join(cli.dir, "logged.db");
    const { default: tools } = (await import(pathToFileURL(logged).href)) as { default: ToolDefinition[] };
    const fp = openForkpoint({ path: db, tools });
    const s = await fp.createSession({ userId: "ann" });
    await s.attachWorkspace(ws);
    const start = await s.checkpoint({ name: "start" });
    await s.invoke("put", { path: join(ws, "put.txt") });
    await fp.close();
    const r = cli.run(["--db", db, "--tools", logged, "rollback", s.id, start.id, "-u", "ann", "--scope", "both"]);
    expect(r.stdout.split("\n").slice(-3)).toEqual(["files         0 written, 0 deleted", "kept as is    1: undo.log", ""]);
    expect(readFileSync(join(ws, "undo.log"), "utf8")).toBe("undone\n");
  });

  it("--leave-unregistered moves the conversation and leaves the call's effect as it is", async () => {
    const { db, file, sessionId, checkpointId } = await seeded("left");
    const r = cli.run(["--db", db, "rollback", sessionId, checkpointId, "-u", "ann", "--leave-unregistered"]);
    expect(r.stdout).toMatch(/^now on branch br_\S+ at position 0\nunregistered  1\n  write_file tc_\S+ /);
    expect(readFileSync(file, "utf8")).toBe("written");
  });

  it("plan shows the call as one to undo once the tools are loaded, and as unregistered without them", async () => {
    const { db, sessionId, checkpointId } = await seeded("planned");
    const without = cli.run(["--db", db, "plan", sessionId, "-c", checkpointId, "-u", "ann"]).stdout;
    expect(without).toMatch(/\nunregistered  1\n/);
    const withTools = cli.run(["--db", db, "--tools", toolsModule, "plan", sessionId, "-c", checkpointId, "-u", "ann"]).stdout;
    expect(withTools).toMatch(/\nwould undo    1\n  write_file tc_\S+ /);
  });

  it("run through tsx from a clone, a TypeScript module that imports forkpoint by name loads, enums and all", async () => {
    const { db, file, sessionId, checkpointId } = await seeded("through-tsx");
    // Outside the clone, as a user's own file is: `forkpoint` resolves to the clone's source (no dist/ needed).
    const ts = join(cli.dir, "typed-tools.ts");
    writeFileSync(
      ts,
      `import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { defineTool, type ToolDefinition } from "forkpoint";
enum Kind { Text = "text" }
export const writeFile: ToolDefinition = defineTool({
  name: "write_file",
  run: async ({ path, text }: { path: string; text: string }) => {
    const previous = existsSync(path) ? readFileSync(path, "utf8") : null;
    writeFileSync(path, text);
    return { path, previous, kind: Kind.Text };
  },
  undo: async ({ result }: { args: unknown; result: { path: string; previous: string | null } }) => {
    if (result.previous === null) rmSync(result.path, { force: true });
    else writeFileSync(result.path, result.previous);
  },
});
`,
    );
    // As `npx tsx src/cli/main.ts` runs it, from the user's own directory.
    const tsx = join(repo, "node_modules", ".bin", "tsx");
    const main = join(repo, "src", "cli", "main.ts");
    const r = spawnSync(tsx, [main, "--db", db, "--tools", ts, "rollback", sessionId, checkpointId, "-u", "ann"], {
      cwd: cli.dir,
      encoding: "utf8",
    });
    expect([r.status, r.stderr]).toEqual([0, ""]);
    expect(r.stdout).toMatch(/^undone\s+1$/m);
    expect(existsSync(file)).toBe(false);
  });

  it("a module that does not load, or exports no tools, is one line and exit 1", async () => {
    const { db, sessionId, checkpointId } = await seeded("bad-module");
    const missing = cli.run(["--db", db, "--tools", join(cli.dir, "nope.mjs"), "rollback", sessionId, checkpointId, "-u", "ann"]);
    expect([missing.status, missing.stderr]).toEqual([1, `error: cannot load --tools ${join(cli.dir, "nope.mjs")}: no such file\n`]);
    // A TypeScript module under plain node: Node strips erasable types itself, so this one loads (and exports no tool).
    const ts = join(cli.dir, "my-tools.ts");
    writeFileSync(ts, "export const n: number = 1;\n");
    const typed = cli.run(["--db", db, "--tools", ts, "rollback", sessionId, checkpointId, "-u", "ann"]);
    expect([typed.status, typed.stderr]).toEqual([1, expect.stringMatching(/^error: --tools .*my-tools\.ts exports no tool definitions/)]);
    // Syntax Node cannot strip: say what to do, not Node's own error and our own paths.
    const enumTs = join(cli.dir, "enum-tools.ts");
    writeFileSync(enumTs, "export enum Kind { A }\n");
    const enumed = cli.run(["--db", db, "--tools", enumTs, "rollback", sessionId, checkpointId, "-u", "ann"]);
    expect([enumed.status, enumed.stderr]).toEqual([
      1,
      `error: cannot load --tools ${enumTs}: TypeScript that Node cannot strip (enums, namespaces, parameter properties); compile it to JavaScript, or run forkpoint with node --import tsx\n`,
    ]);
    const directory = cli.run(["--db", db, "--tools", cli.dir, "rollback", sessionId, checkpointId, "-u", "ann"]);
    expect([directory.status, directory.stderr]).toEqual([1, `error: cannot load --tools ${cli.dir}: a directory, not a module file\n`]);
    const empty = join(cli.dir, "empty.mjs");
    writeFileSync(empty, "export const answer = 42;\n");
    const none = cli.run(["--db", db, "--tools", empty, "rollback", sessionId, checkpointId, "-u", "ann"]);
    expect([none.status, none.stderr]).toEqual([1, expect.stringMatching(/^error: --tools .*empty\.mjs exports no tool definitions/)]);
  });
});
