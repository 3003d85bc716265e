// drizzle-kit settings for PostgreSQL: migrations in drizzle/postgres/ are generated from src/store/postgres/schema.ts.
import { defineConfig } from "drizzle-kit";

export default defineConfig({
  dialect: "postgresql",
  schema: "./src/store/postgres/schema.ts",
  out: "./drizzle/postgres",
  // Where forkpoint keeps its history (MIGRATIONS_TABLE in src/store/postgres/tables.ts), not drizzle's default table,
  // which the app's own drizzle migrations use.
  migrations: { schema: "drizzle", table: "__forkpoint_migrations" },
});
