// drizzle-kit settings: migrations in drizzle/ are generated from src/store/schema.ts.
import { defineConfig } from "drizzle-kit";

export default defineConfig({ dialect: "sqlite", schema: "./src/store/schema.ts", out: "./drizzle" });
