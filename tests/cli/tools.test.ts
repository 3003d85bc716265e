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
        /^error TOOL_NOT_REGISTERED: this rollback must undo or replay 1 reversible tool call\(s\) \(write_file tc_\S+\) .*pass --tools \.\/my-tools\.js/,
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

  it("undo and redo without it are refused in the CLI's words (--tools, --leave-unregistered), nothing changed", async () => {
    const { db, file, sessionId, checkpointId } = await seeded("undo-redo");
    expect(cli.run(["--db", db, "rollback", sessionId, checkpointId, "-u", "ann", "--tools", toolsModule]).status).toBe(0);
    const refusal = (verb: string) =>
      new RegExp(
        `^error TOOL_NOT_REGISTERED: this ${verb} must undo or replay 1 reversible tool call\\(s\\) \\(write_file tc_\\S+\\) ` +
          "whose tool\\(s\\) write_file are not loaded: pass --tools \\./my-tools\\.js \\(a module exporting their defineTool " +
          "definitions\\), or --leave-unregistered to leave those calls as they are\n$",
      );
    const before = dumpDatabase(db);
    const undo = cli.run(["--db", db, "undo", sessionId, "-u", "ann"]);
    expect(undo.status).toBe(1);
    expect(undo.stderr).toMatch(refusal("undo"));
    expect(dumpDatabase(db)).toEqual(before);
    expect(existsSync(file)).toBe(false);
    expect(cli.run(["--db", db, "undo", sessionId, "-u", "ann", "--tools", toolsModule]).status).toBe(0);
    expect(readFileSync(file, "utf8")).toBe("written");
    const redo = cli.run(["--db", db, "redo", sessionId, "-u", "ann"]);
    expect(redo.status).toBe(1);
    expect(redo.stderr).toMatch(refusal("redo"));
    expect(readFileSync(file, "utf8")).toBe("written");
  });

  it("plan shows the call as one to undo once the tools are loaded, and as unregistered without them", async () => {
    const { db, sessionId, checkpointId } = await seeded("planned");
    const without = cli.run(["--db", db, "plan", sessionId, "-c", checkpointId, "-u", "ann"]).stdout;
    expect(without).toMatch(/\nunregistered  1\n/);
    // The rollback itself is refused for want of that tool: the plan and the dry run say so (exit 0: they are plans).
    const refusal = /\nrefused       TOOL_NOT_REGISTERED: .*--tools .*--leave-unregistered/;
    expect(without).toMatch(refusal);
    const dry = cli.run(["--db", db, "rollback", sessionId, checkpointId, "-u", "ann", "--dry-run"]);
    expect(dry.status).toBe(0);
    expect(dry.stdout).toMatch(refusal);
    const left = cli.run(["--db", db, "rollback", sessionId, checkpointId, "-u", "ann", "--dry-run", "--leave-unregistered"]).stdout;
    expect(left).toMatch(/\nunregistered  1\n/);
    expect(left).not.toContain("refused");
    const withTools = cli.run(["--db", db, "--tools", toolsModule, "plan", sessionId, "-c", checkpointId, "-u", "ann"]).stdout;
    expect(withTools).toMatch(/\nwould undo    1\n  write_file tc_\S+ /);
    expect(withTools).not.toContain("refused");
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
    expect([missing.status, missing.stderr]).toEqual([
      1,
      `error TOOLS_NOT_LOADED: cannot load --tools ${join(cli.dir, "nope.mjs")}: no such file\n`,
    ]);
    // A TypeScript module under plain node: Node strips erasable types itself, so this one loads (and exports no tool).
    const ts = join(cli.dir, "my-tools.ts");
    writeFileSync(ts, "export const n: number = 1;\n");
    const typed = cli.run(["--db", db, "--tools", ts, "rollback", sessionId, checkpointId, "-u", "ann"]);
    expect([typed.status, typed.stderr]).toEqual([
      1,
      expect.stringMatching(/^error TOOLS_NOT_LOADED: --tools .*my-tools\.ts exports no tool definitions/),
    ]);
    // Syntax Node cannot strip: say what to do, not Node's own error and our own paths.
    const enumTs = join(cli.dir, "enum-tools.ts");
    writeFileSync(enumTs, "export enum Kind { A }\n");
    const enumed = cli.run(["--db", db, "--tools", enumTs, "rollback", sessionId, checkpointId, "-u", "ann"]);
    expect([enumed.status, enumed.stderr]).toEqual([
      1,
      `error TOOLS_NOT_LOADED: cannot load --tools ${enumTs}: TypeScript that Node cannot strip (enums, namespaces, parameter properties); compile it to JavaScript, or run forkpoint with node --import tsx\n`,
    ]);
    const directory = cli.run(["--db", db, "--tools", cli.dir, "rollback", sessionId, checkpointId, "-u", "ann"]);
    expect([directory.status, directory.stderr]).toEqual([
      1,
      `error TOOLS_NOT_LOADED: cannot load --tools ${cli.dir}: a directory, not a module file\n`,
    ]);
    const empty = join(cli.dir, "empty.mjs");
    writeFileSync(empty, "export const answer = 42;\n");
    const none = cli.run(["--db", db, "--tools", empty, "rollback", sessionId, checkpointId, "-u", "ann"]);
    expect([none.status, none.stderr]).toEqual([
      1,
      expect.stringMatching(/^error TOOLS_NOT_LOADED: --tools .*empty\.mjs exports no tool definitions/),
    ]);
  });
});

describe("a move that fails, and --json failures", () => {
  /** A module whose undo of the call with `v: "bad"` throws (its message holds a terminal escape). */
  function badTools(): string {
    const file = join(cli.dir, "bad-tools.mjs");
    writeFileSync(
      file,
      `export const put = { name: "put", run: ({ v }) => v, undo: ({ args }) => { if (args.v === "bad") throw new Error("disk \\x1b[31mfull"); } };\n`,
    );
    return file;
  }

  /** A session with checkpoint "start", then calls of put: bad, ok1, ok2 (undone newest first: ok2, ok1, then bad fails). */
  async function withCalls(name: string) {
    const db = join(cli.dir, `${name}.db`);
    const { put } = (await import(pathToFileURL(badTools()).href)) as { put: ToolDefinition };
    const fp = openForkpoint({ path: db, tools: [put] });
    const s = await fp.createSession({ userId: "ann" });
    const start = await s.checkpoint({ name: "start" });
    for (const v of ["bad", "ok1", "ok2"]) await s.invoke("put", { v });
    const calls = (await s.toolTrack()).map((t) => t.id);
    await fp.close();
    return { db, sessionId: s.id, checkpointId: start.id, calls };
  }

  it("an undo that throws: what the rollback undid before it is printed, with the failed call, and exit 1", async () => {
    const { db, sessionId, checkpointId, calls } = await withCalls("undo-fails");
    const r = cli.run(["--db", db, "--tools", badTools(), "rollback", sessionId, checkpointId, "-u", "ann"]);
    expect(r.status).toBe(1);
    expect(r.stdout.split("\n")).toEqual([
      "stopped: a tool call's handler failed; the session did not move (run the command again to continue)",
      "undone        2",
      `  put ${calls[2]} {"v":"ok2"}`,
      `  put ${calls[1]} {"v":"ok1"}`,
      "failed        1",
      `  undo put ${calls[0]} {"v":"bad"}: disk \\x1b[31mfull`,
      "",
    ]);
    expect(r.stderr).toBe(`error UNDO_FAILED: undo of put invocation ${calls[0]} failed: disk \\x1b[31mfull\n`);
  });

  it("a forced rollback that fails after saving the drift says where it saved it", async () => {
    const db = join(cli.dir, "forced-fails.db");
    const ws = join(cli.dir, "forced-fails");
    mkdirSync(ws);
    writeFileSync(join(ws, "a.txt"), "1");
    const { put } = (await import(pathToFileURL(badTools()).href)) as { put: ToolDefinition };
    const fp = openForkpoint({ path: db, tools: [put] });
    const s = await fp.createSession({ userId: "ann" });
    await s.attachWorkspace(ws);
    const start = await s.checkpoint({ name: "start" });
    await s.invoke("put", { v: "bad" });
    await fp.close();
    writeFileSync(join(ws, "a.txt"), "by hand");

    const args = ["--db", db, "--tools", badTools(), "rollback", s.id, start.id, "-u", "ann", "--scope", "both", "--force"];
    const r = cli.run(args);
    expect(r.status).toBe(1);
    const [line, saved] = r.stderr.split("\n");
    expect(line).toMatch(/^error UNDO_FAILED: /);
    expect(saved).toMatch(/^saved drift: 1 file\(s\) in checkpoint cp_\S+, before this failed$/);
    // That checkpoint holds the hand edit.
    const id = /checkpoint (cp_\S+),/.exec(saved!)![1]!;
    expect(JSON.parse(cli.run(["--db", db, "--json", "show", id, "-u", "ann"]).stdout).checkpoint.metadata).toMatchObject({
      forkpoint: "saved-drift",
    });
  });

  it("under --json: the failure on stdout as { error: { code, message, undone, replayed, failed } }", async () => {
    const { db, sessionId, checkpointId, calls } = await withCalls("undo-fails-json");
    const r = cli.run(["--db", db, "--json", "--tools", badTools(), "rollback", sessionId, checkpointId, "-u", "ann"]);
    expect(r.status).toBe(1);
    const { error } = JSON.parse(r.stdout) as { error: Record<string, any> };
    expect(error).toMatchObject({ code: "UNDO_FAILED", invocationId: calls[0], tool: "put", replayed: [] });
    expect(error.message).toBe(`undo of put invocation ${calls[0]} failed: disk \u001b[31mfull`);
    expect(error.undone.map((t: { id: string }) => t.id)).toEqual([calls[2], calls[1]]);
    expect(error.failed).toEqual([{ step: "undo", error: "disk \u001b[31mfull", invocation: expect.objectContaining({ id: calls[0] }) }]);
    // Escaped for a terminal, as all --json output is.
    expect(r.stdout).not.toContain("\u001b");
  });

  it("under --json, every failure is JSON on stdout with its code: the CLI's own, the engine's, a usage error", async () => {
    const { db, sessionId, checkpointId } = await withCalls("codes");
    const refused = cli.run(["--db", db, "--json", "rollback", sessionId, checkpointId, "-u", "ann"]);
    expect([refused.status, JSON.parse(refused.stdout).error.code]).toEqual([1, "TOOL_NOT_REGISTERED"]);
    expect(JSON.parse(refused.stdout).error.message).toMatch(/^this rollback must undo or replay 3 reversible tool call/);
    expect(refused.stderr).toMatch(/^error TOOL_NOT_REGISTERED: this rollback must undo/);
    const missing = cli.run(["--db", join(cli.dir, "none.db"), "--json", "sessions", "-u", "ann"]);
    expect([missing.status, JSON.parse(missing.stdout)]).toEqual([
      1,
      { error: { code: "NO_DATABASE", message: expect.stringMatching(/^no database at /) } },
    ]);
    const notFound = cli.run(["--db", db, "--json", "show", "cp_nope", "-u", "ann"]);
    expect([notFound.status, JSON.parse(notFound.stdout).error.code]).toEqual([1, "NOT_FOUND"]);
    const usage = cli.run(["--db", db, "--json", "rollback", sessionId]);
    expect([usage.status, JSON.parse(usage.stdout)]).toEqual([
      2,
      { error: { code: "USAGE", message: expect.stringMatching(/-u, --user/) } },
    ]);
    // Without --json, stdout stays empty.
    expect(cli.run(["--db", db, "rollback", sessionId, checkpointId, "-u", "ann"]).stdout).toBe("");
  });
});
