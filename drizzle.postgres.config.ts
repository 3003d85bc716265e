// drizzle-kit settings for PostgreSQL: migrations in drizzle/postgres/ are generated from src/store/postgres/schema.ts.
import { defineConfig } from "drizzle-kit";

export default defineConfig({ dialect: "postgresql", schema: "./src/store/postgres/schema.ts", out: "./drizzle/postgres" });
