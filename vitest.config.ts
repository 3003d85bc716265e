// Test runner settings: real SQLite files and child processes, so tests get generous timeouts.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["tests/**/*.test.ts"],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    coverage: { provider: "v8", include: ["src/**/*.ts"], reporter: ["text-summary", "text"] },
  },
});
