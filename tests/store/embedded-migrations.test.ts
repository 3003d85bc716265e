// The migrations embedded in the code (src/store/migrations.generated.ts) are exactly drizzle/'s, as drizzle reads them.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { readMigrationFiles } from "drizzle-orm/migrator";
import { describe, expect, it } from "vitest";
import { MODULE_PATH, renderMigrationsModule, root } from "../../scripts/generate-migrations.js";
import { MIGRATIONS } from "../../src/store/sqlite/migrations.generated.js";

describe("embedded migrations", () => {
  it("the generated module is what drizzle/ generates today (run `npm run db:generate` after changing the schema)", () => {
    expect(readFileSync(MODULE_PATH, "utf8")).toBe(renderMigrationsModule());
  });

  it("hold the statements, hashes and times drizzle's own migrator reads, so migrated databases keep matching", () => {
    const drizzle = readMigrationFiles({ migrationsFolder: join(root, "drizzle", "sqlite") });
    expect(MIGRATIONS.map(({ sql, hash, folderMillis }) => ({ sql, hash, folderMillis }))).toEqual(
      drizzle.map(({ sql, hash, folderMillis }) => ({ sql, hash, folderMillis })),
    );
  });
});
