// Writes src/store/{sqlite,postgres}/migrations.generated.ts from drizzle/{sqlite,postgres}/ (the journals and their .sql files), so
// that every build, bundled ones too, carries the migrations in its code instead of reading a folder next to the installed files.
import { createHash } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

export const root = resolve(import.meta.dirname, "..");
export const MODULE_PATH = join(root, "src", "store", "sqlite", "migrations.generated.ts");
export const PG_MODULE_PATH = join(root, "src", "store", "postgres", "migrations.generated.ts");
export const PG_FOLDER = join(root, "drizzle", "postgres");

interface Journal {
  entries: { tag: string; when: number }[];
}

/**
 * The module's text for the migrations in `folder`. Each migration is drizzle's own reading of it (the statements split
 * at its breakpoints, the SHA-256 of the file, the journal time), so databases migrated before keep matching rows.
 */
export function renderMigrationsModule(folder = join(root, "drizzle", "sqlite"), name = "drizzle/"): string {
  const journal = JSON.parse(readFileSync(join(folder, "meta", "_journal.json"), "utf8")) as Journal;
  const migrations = journal.entries.map((entry) => {
    const text = readFileSync(join(folder, `${entry.tag}.sql`), "utf8");
    return {
      tag: entry.tag,
      folderMillis: entry.when,
      hash: createHash("sha256").update(text).digest("hex"),
      sql: text.split("--> statement-breakpoint"),
    };
  });
  return [
    `// Generated from ${name} by scripts/generate-migrations.ts (npm run db:generate runs it): do not edit.`,
    "",
    `/** One migration of ${name}: its statements, the SHA-256 of its file, and its journal time (its order). */`,
    "export interface EmbeddedMigration {",
    "  readonly tag: string;",
    "  readonly folderMillis: number;",
    "  readonly hash: string;",
    "  readonly sql: readonly string[];",
    "}",
    "",
    `export const MIGRATIONS: readonly EmbeddedMigration[] = ${JSON.stringify(migrations, null, 2)};`,
    "",
  ].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  writeFileSync(MODULE_PATH, renderMigrationsModule());
  console.log(`wrote ${MODULE_PATH}`);
  writeFileSync(PG_MODULE_PATH, renderMigrationsModule(PG_FOLDER, "drizzle/postgres/"));
  console.log(`wrote ${PG_MODULE_PATH}`);
}
