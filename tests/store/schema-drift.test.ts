// src/store/schema.ts and the committed migrations in drizzle/ must agree: drizzle-kit has nothing new to generate.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { makeTempDir, removeDir } from "../helpers.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const DRIZZLE_KIT = path.join(ROOT, "node_modules", ".bin", "drizzle-kit");

function listFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => path.relative(dir, path.join(d.parentPath, d.name)))
    .sort();
}

let tmp: string | undefined;
afterEach(() => {
  if (tmp) removeDir(tmp);
  tmp = undefined;
});

describe("schema drift", () => {
  it("drizzle-kit generate against a copy of drizzle/ produces no new migration", () => {
    tmp = makeTempDir("forkpoint-drift-");
    const out = path.join(tmp, "drizzle");
    fs.cpSync(path.join(ROOT, "drizzle", "sqlite"), out, { recursive: true });
    const before = listFiles(out);
    const journalBefore = fs.readFileSync(path.join(out, "meta", "_journal.json"), "utf8");

    // drizzle-kit prefixes --out with "./", so it must be relative to the working directory.
    const log = execFileSync(
      DRIZZLE_KIT,
      ["generate", "--dialect", "sqlite", "--schema", "src/store/sqlite/schema.ts", "--out", path.relative(ROOT, out)],
      { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
    );

    expect(listFiles(out), log).toEqual(before);
    expect(fs.readFileSync(path.join(out, "meta", "_journal.json"), "utf8")).toBe(journalBefore);
    expect(log).toMatch(/No schema changes/);
  });

  it("the journal lists exactly the .sql files of drizzle/", () => {
    const dir = path.join(ROOT, "drizzle", "sqlite");
    const journal = JSON.parse(fs.readFileSync(path.join(dir, "meta", "_journal.json"), "utf8")) as { entries: { tag: string }[] };
    const sql = fs
      .readdirSync(dir)
      .filter((f) => f.endsWith(".sql"))
      .map((f) => f.replace(/\.sql$/, ""))
      .sort();
    expect(journal.entries.map((e) => e.tag).sort()).toEqual(sql);
  });
});
