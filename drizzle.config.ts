// drizzle-kit settings: migrations in drizzle/sqlite/ are generated from src/store/sqlite/schema.ts.
import { defineConfig } from "drizzle-kit";

export default defineConfig({ dialect: "sqlite", schema: "./src/store/sqlite/schema.ts", out: "./drizzle/sqlite" });
