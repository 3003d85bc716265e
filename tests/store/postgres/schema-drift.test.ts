// src/store/postgres/schema.ts and drizzle/postgres/ agree: drizzle-kit has nothing new to generate, and the code embeds them.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { getTableConfig, PgTable } from "drizzle-orm/pg-core";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { afterEach, describe, expect, it } from "vitest";
import { PG_FOLDER, PG_MODULE_PATH, renderMigrationsModule } from "../../../scripts/generate-migrations.js";
import { MIGRATIONS } from "../../../src/store/postgres/migrations.generated.js";
import * as schema from "../../../src/store/postgres/schema.js";
import { MIGRATIONS_SCHEMA, MIGRATIONS_TABLE_NAME, TABLES } from "../../../src/store/postgres/tables.js";
import drizzleKitConfig from "../../../drizzle.postgres.config.js";

const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
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
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  tmp = undefined;
});

describe("postgres schema drift", () => {
  it("drizzle-kit generate against a copy of drizzle/postgres produces no new migration", () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "forkpoint-pg-drift-"));
    const out = path.join(tmp, "postgres");
    fs.cpSync(PG_FOLDER, out, { recursive: true });
    const before = listFiles(out);
    const journalBefore = fs.readFileSync(path.join(out, "meta", "_journal.json"), "utf8");
    // drizzle-kit prefixes --out with "./", so it must be relative to the working directory.
    const log = execFileSync(
      DRIZZLE_KIT,
      ["generate", "--dialect", "postgresql", "--schema", "src/store/postgres/schema.ts", "--out", path.relative(ROOT, out)],
      { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] },
    );
    expect(listFiles(out), log).toEqual(before);
    expect(fs.readFileSync(path.join(out, "meta", "_journal.json"), "utf8")).toBe(journalBefore);
    expect(log).toMatch(/No schema changes/);
  });

  it("the journal lists exactly the .sql files of drizzle/postgres", () => {
    const journal = JSON.parse(fs.readFileSync(path.join(PG_FOLDER, "meta", "_journal.json"), "utf8")) as { entries: { tag: string }[] };
    const sql = fs
      .readdirSync(PG_FOLDER)
      .filter((f) => f.endsWith(".sql"))
      .map((f) => f.replace(/\.sql$/, ""))
      .sort();
    expect(journal.entries.map((e) => e.tag).sort()).toEqual(sql);
  });

  it("the embedded migrations are drizzle/postgres as drizzle's own migrator reads it (run `npm run db:generate` after a change)", () => {
    expect(fs.readFileSync(PG_MODULE_PATH, "utf8")).toBe(renderMigrationsModule(PG_FOLDER, "drizzle/postgres/"));
    const drizzle = readMigrationFiles({ migrationsFolder: PG_FOLDER });
    expect(MIGRATIONS.map(({ sql, hash, folderMillis }) => ({ sql, hash, folderMillis }))).toEqual(
      drizzle.map(({ sql, hash, folderMillis }) => ({ sql, hash, folderMillis })),
    );
  });

  it("the store's table list is the schema's", () => {
    const names = (Object.values(schema) as unknown[])
      .filter((t): t is PgTable => t instanceof PgTable)
      .map((t) => getTableConfig(t).name)
      .sort();
    expect([...TABLES].sort()).toEqual(names);
  });

  it("drizzle-kit's settings name forkpoint's own history table, not drizzle's default (the app's)", () => {
    expect((drizzleKitConfig as { migrations?: unknown }).migrations).toEqual({ schema: MIGRATIONS_SCHEMA, table: MIGRATIONS_TABLE_NAME });
  });
});
