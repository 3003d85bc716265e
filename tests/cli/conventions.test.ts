// Shell conventions: --version, exit codes, FORKPOINT_DB, help with examples, colour and times on a terminal only,
// progress on stderr only on a terminal.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { installCli, repo, runInTerminal, type Installed } from "./binary.js";
import { runInProcess } from "./in-process.js";

let cli: Installed;
let db = "";
let sessionId = "";
beforeAll(async () => {
  cli = await installCli();
  db = join(cli.dir, "conv.db");
  const fp = openForkpoint({ path: db });
  const s = await fp.createSession({ userId: "ann", title: "Conventions" });
  for (let i = 0; i < 50; i++) await s.append({ role: "user", content: `message ${i}` });
  await s.checkpoint({ name: "fifty" });
  sessionId = s.id;
  await fp.close();
});
afterAll(() => cli.remove());

const VERBS = [
  "sessions",
  "users",
  "summary",
  "tree",
  "history",
  "checkpoints",
  "show",
  "diff",
  "timeline",
  "versions",
  "plan",
  "rollback",
  "switch",
  "edit",
  "undo",
  "redo",
  "delete",
  "export",
  "import",
  "verify",
  "prune",
  "recover",
  "resolve",
  "demo",
  "ui",
];

describe("conventions", () => {
  it("--version prints the package's version", () => {
    const { version } = JSON.parse(readFileSync(join(repo, "package.json"), "utf8"));
    const r = cli.run(["--version"]);
    expect([r.status, r.stdout]).toEqual([0, `${version}\n`]);
  });

  it("usage errors exit 2 with commander's one-line message; failures exit 1", () => {
    const unknown = cli.run(["--db", db, "bogus"]);
    expect([unknown.status, unknown.stderr.split("\n")[0]]).toEqual([2, "error: unknown command 'bogus'"]);
    expect(cli.run(["--db", db, "history", sessionId]).status).toBe(2); // no -u
    expect(cli.run(["--db", db, "sessions", "-u", "ann", "-n", "zero"]).status).toBe(2);
    expect(cli.run(["--db", db, "sessions"]).status).toBe(2); // neither -u nor --all
    expect(cli.run(["--db", db, "plan", sessionId, "-u", "ann"]).status).toBe(2); // no target
    expect(cli.run(["--db", db, "checkpoints", "-u", "ann", "--since", "yesterday"]).status).toBe(2);
    expect(cli.run([]).status).toBe(2); // no command: the help, on stderr
    const missing = cli.run(["--db", db, "history", "ses_nope", "-u", "ann"]);
    expect([missing.status, missing.stderr]).toEqual([1, `error NOT_FOUND: session not found: "ses_nope"\n`]);
  });

  it("a reader that stops early (| head -1) ends the command quietly: no EPIPE stack, exit 0", () => {
    // Every line is its own write: once head has gone, the next one meets a closed pipe.
    for (const args of [["history", sessionId, "-u", "ann", "-n", "50"], ["timeline", sessionId, "-u", "ann", "-n", "50"], ["--help"]]) {
      const r = spawnSync("bash", ["-c", `set -o pipefail; "$0" "$@" | head -1`, process.execPath, cli.bin, "--db", db, ...args], {
        encoding: "utf8",
      });
      expect([args[0], r.status, r.stdout.split("\n").length, r.stderr]).toEqual([args[0], 0, 2, ""]);
    }
  });

  it("--help and --version load no engine: not the library, the database driver, drizzle or zod", () => {
    // A module hook that records every module the process loads (no timing: what is loaded is what costs).
    const hooks = join(cli.dir, "record-hooks.mjs");
    writeFileSync(
      hooks,
      `import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const r = await next(specifier, context);
  appendFileSync(process.env.LOADED_LOG, r.url + "\\n");
  return r;
}
`,
    );
    const register = join(cli.dir, "record.mjs");
    writeFileSync(register, `import { register } from "node:module"; register(${JSON.stringify(`file://${hooks}`)});\n`);
    for (const args of [["--help"], ["--version"], ["history", "--help"]]) {
      const log = join(cli.dir, `loaded-${args[0]}.log`);
      writeFileSync(log, "");
      const r = spawnSync(process.execPath, ["--import", register, cli.bin, ...args], {
        encoding: "utf8",
        env: { PATH: process.env.PATH, LOADED_LOG: log },
      });
      expect(r.status).toBe(0);
      const loaded = readFileSync(log, "utf8").split("\n").filter(Boolean);
      expect(loaded).toContainEqual(expect.stringMatching(/\/dist\/cli\/main\.js$/));
      expect([
        args[0],
        loaded.filter((url) => /\/dist\/index\.js$|\/dist\/(sessions|store|tools)\/|better-sqlite3|drizzle-orm|\/zod\//.test(url)),
      ]).toEqual([args[0], []]);
    }
  });

  it("FORKPOINT_DB is the database when --db is absent; --db wins", () => {
    const viaEnv = cli.run(["sessions", "-u", "ann"], { env: { FORKPOINT_DB: db } });
    expect([viaEnv.status, viaEnv.stdout]).toEqual([0, expect.stringContaining("Conventions")]);
    const other = join(cli.dir, "absent.db");
    expect(cli.run(["--db", other, "sessions", "-u", "ann"], { env: { FORKPOINT_DB: db } }).stderr).toContain(`no database at ${other}`);
    // Neither: ./forkpoint.db in the working directory, which is not there.
    expect(cli.run(["users"], { cwd: cli.dir }).stderr).toContain("no database at ./forkpoint.db");
  });

  it("--help lists every verb; each command's help has examples", async () => {
    const help = cli.run(["--help"]);
    expect(help.status).toBe(0);
    for (const verb of VERBS) expect(help.stdout).toMatch(new RegExp(`^  ${verb}\\b`, "m"));
    // Each command's help in the test process (./in-process.ts); the binary prints it the same way.
    expect((await runInProcess(["--help"])).stdout).toBe(help.stdout);
    for (const verb of VERBS) {
      const r = await runInProcess([verb, "--help"]);
      expect([verb, r.status, r.stdout]).toEqual([verb, 0, expect.stringMatching(new RegExp(`Examples:\\n  \\$ forkpoint .*${verb}`))]);
    }
  });

  it("piped: no colour, ISO times, and nothing on stderr from long calls", () => {
    const listed = cli.run(["--db", db, "sessions", "-u", "ann"], { env: { FORCE_COLOR: "1" } });
    expect(listed.stdout).not.toContain("\x1b");
    expect(listed.stdout).toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/);
    for (const args of [["verify"], ["export", sessionId, "-u", "ann", "-o", join(cli.dir, "e.json")], ["prune", "--no-vacuum"]]) {
      const r = cli.run(["--db", db, ...args]);
      expect([args[0], r.status, r.stderr]).toEqual([args[0], 0, ""]);
    }
  });

  it("on a terminal: colour, relative times, and a progress bar on stderr; NO_COLOR turns colour off", () => {
    const tty = runInTerminal([process.execPath, cli.bin, "--db", db, "sessions", "-u", "ann"]);
    expect(tty.status).toBe(0);
    expect(tty.output).toContain("\x1b[1mID\x1b[22m");
    expect(tty.output).toMatch(/(seconds?|minutes?|hours?) ago|now/);
    const plain = runInTerminal([process.execPath, cli.bin, "--db", db, "sessions", "-u", "ann"], { NO_COLOR: "1" });
    expect(plain.output).not.toContain("\x1b[1m");
    // A terminal that declares it cannot (TERM=dumb: Emacs shells, some CI logs) gets none either, as git does.
    const dumb = runInTerminal([process.execPath, cli.bin, "--db", db, "sessions", "-u", "ann"], { TERM: "dumb" });
    expect([dumb.status, dumb.output]).toEqual([0, expect.not.stringContaining("\x1b[1m")]);
    const verify = runInTerminal([process.execPath, cli.bin, "--db", db, "verify"]);
    expect(verify.status).toBe(0);
    expect(verify.output).toMatch(/verify \[[^\]]*\] \d+% \d+\/\d+/);
    expect(verify.output).toContain("ok: 1 session(s) verified");
  });
});
