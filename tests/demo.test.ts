// `npm start` runs the demo: it must work on a new database file and again on the same file.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = resolve(import.meta.dirname, "..");
const dir = mkdtempSync(join(tmpdir(), "forkpoint-demo-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const runDemo = () =>
  execFileSync(process.execPath, ["--import", "tsx", join(root, "examples/demo.ts"), join(dir, "demo.db"), join(dir, "files")], {
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
});
