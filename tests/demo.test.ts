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

  it("npm start runs the CLI's demo from the TypeScript source (no build), and the commands it suggests run", async () => {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8"));
    expect(pkg.scripts.start).toBe("node scripts/require-node.mjs && tsx src/cli/main.ts demo");
    const db = join(dir, "start.db");
    const out = execFileSync(
      process.execPath,
      ["--import", "tsx", join(root, "src/cli/main.ts"), "--db", db, "demo", "--files", join(dir, "start-files")],
      { cwd: root, encoding: "utf8" },
    );
    const suggested = out.split("\n").filter((l) => l.startsWith("  npx tsx src/cli/main.ts "));
    expect(suggested.length).toBeGreaterThanOrEqual(10);
    // The first as printed, through tsx; the others from the same source in this process (tests/cli/in-process.ts).
    for (const [i, line] of suggested.entries()) {
      const args = line.trim().split(/\s+/).slice(3);
      const r =
        i === 0
          ? spawnSync(process.execPath, ["--import", "tsx", join(root, "src/cli/main.ts"), ...args], { cwd: root, encoding: "utf8" })
          : await runInProcess(args);
      expect([line, r.status, r.stderr]).toEqual([line, 0, ""]);
    }
    // The suggested switch replayed the agent's files, and the suggested rollback undid them again.
    expect(readdirSync(join(dir, "start-files"))).toEqual([]);
  });
});
