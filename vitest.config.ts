// Test runner settings: real SQLite files, a PostgreSQL server and child processes, so tests get generous timeouts.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // One PostgreSQL server for the run, started in the background (tests/setup/postgres.ts).
    globalSetup: ["tests/setup/postgres.ts"],
    coverage: { provider: "v8", include: ["src/**/*.ts"], reporter: ["text-summary", "text"] },
  },
});
