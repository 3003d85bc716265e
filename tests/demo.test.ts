// The demo (`npm start`, `forkpoint demo`): it must work on a new database file and again on the same file, and leave
// a database every command can be tried on. SQLite only (not in the postgres project): the demo is the CLI's, and the
// CLI opens a database file (`--db`).
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runInProcess } from "./cli/in-process.js";
import { nodeArgs } from "./fixtures/compiled.js";
import { startCli } from "./ui/serve.js";

const root = resolve(import.meta.dirname, "..");
const dir = mkdtempSync(join(tmpdir(), "forkpoint-demo-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Compiled once for the run (tests/fixtures/compiled.ts): tsx's own start is what the `npm start` test below runs.
const runDemo = () =>
  execFileSync(process.execPath, [...nodeArgs(join(root, "examples/demo.ts")), join(dir, "demo.db"), join(dir, "files")], {
    cwd: root,
    encoding: "utf8",
  });

describe("the demo", () => {
  it("runs on a fresh database, then again on the same file, undoing its files on disk", () => {
    const first = runDemo();
    expect(first).toContain("< 2/2 >");
    expect(first).toMatch(/files on disk\s+notes\.md, plan\.txt/);
    expect(first).toMatch(/files on disk now\s+\(none\)/);
    const second = runDemo();
    expect(second).toContain("Done.");
    expect(readdirSync(join(dir, "files"))).toEqual([]);
  });

  it("npm start runs the CLI's demo from the TypeScript source (no build), and each command it suggests does what it says", async () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    expect(pkg.scripts.start).toBe("node scripts/require-node.mjs && tsx src/cli/main.ts demo");
    const db = join(dir, "start.db");
    const files = join(dir, "start-files");
    const out = execFileSync(process.execPath, ["--import", "tsx", join(root, "src/cli/main.ts"), "--db", db, "demo", "--files", files], {
      cwd: root,
      encoding: "utf8",
    });
    // Each command follows the comment that says what it does.
    const lines = out.split("\n");
    const suggested = lines.flatMap((l, i) => (l.startsWith("  npx tsx src/cli/main.ts ") ? [{ line: l, says: lines[i - 1]! }] : []));
    expect(suggested.length).toBeGreaterThanOrEqual(12);
    expect(suggested.every((s) => s.says.startsWith("  # "))).toBe(true);
    const does: Record<string, (stdout: string) => void> = {
      plan: (stdout) => expect(stdout).toMatch(/^would replay\s+3$/m),
      switch: (stdout) => {
        expect(stdout).toMatch(/^replayed\s+3$/m);
        expect(readdirSync(files).sort()).toEqual(["notes.md", "plan.txt"]);
      },
      rollback: (stdout) => {
        expect(stdout).toMatch(/^now on branch br_\S+ at position 0\n/);
        expect(stdout).toMatch(/^undone\s+3$/m);
        expect(readdirSync(files)).toEqual([]);
      },
      verify: (stdout) => expect(stdout).toMatch(/^ok: \d+ session\(s\) verified$/m),
    };
    // The first as printed, through tsx; the others from the same source in this process (tests/cli/in-process.ts);
    // the web view as a process that serves its page until stopped.
    for (const [i, { line }] of suggested.entries()) {
      const args = line.trim().split(/\s+/).slice(3);
      const verb = args[2]!;
      if (verb === "ui") {
        const ui = await startCli(args);
        try {
          const page = await fetch(ui.url);
          expect([page.status, await page.text()]).toEqual([200, expect.stringContaining('<div id="root">')]);
        } finally {
          await ui.stop();
        }
        continue;
      }
      const r =
        i === 0
          ? spawnSync(process.execPath, ["--import", "tsx", join(root, "src/cli/main.ts"), ...args], { cwd: root, encoding: "utf8" })
          : await runInProcess(args);
      expect([line, r.status, r.stderr]).toEqual([line, 0, ""]);
      does[verb]?.(r.stdout);
    }
    expect(suggested.map((s) => s.line.trim().split(/\s+/)[5])).toEqual(
      expect.arrayContaining(["plan", "switch", "rollback", "verify", "ui"]),
    );
  });
});
