// Test runner settings: real SQLite files, a PostgreSQL server and child processes, so tests get generous timeouts.
// Three projects: `sqlite` runs every suite; `postgres` runs the public-API suites again with the engine on PostgreSQL
// and `pgbouncer` once more through a transaction-mode PgBouncer (FORKPOINT_TEST_STORE, read by tests/fixtures/backend.ts;
// tests/setup/store.ts gives it the run's server and pooler). `npm test` takes a sample of the suites on the last two.
// `npx vitest run --project postgres <files>` runs one of them.
import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

// Not isolated: a worker process loads src/ and the fixtures once and runs file after file on them (~0.7 s of module
// loading saved per file). Setup files still run before each file; the one shared module with per-file state, the
// Postgres fixture (tests/fixtures/backend.ts), is released after each file by tests/setup/store.ts.
// A poll waits up to 15 s (vitest's default is 1 s): a page or a child process on two busy cores can take longer to
// show what it will show, and a poll that never succeeds still fails.
const shared = { testTimeout: 60_000, hookTimeout: 60_000, pool: "forks", isolate: false, expect: { poll: { timeout: 15_000 } } } as const;

/** The suites that go through the public API and so run on each store (issue 18: stores are equal citizens). */
const PUBLIC_API = [
  "tests/sessions/**/*.test.ts",
  "tests/tools/**/*.test.ts",
  "tests/ai/**/*.test.ts",
  "tests/openai-agents/**/*.test.ts",
  "tests/langgraph/**/*.test.ts",
  "tests/reliability/**/*.test.ts",
  "tests/docs/examples.test.ts",
];
/**
 * On PostgreSQL in every `npm test`: the suites about connections (leases, crashes, racing processes) and one tour per
 * adapter, beside the store spec (tests/store/spec/postgres.test.ts), which takes every store unit's SQL. `npm test` sets
 * FORKPOINT_PG_SUITES=sample to keep to these (a whole run on two cores in minutes); otherwise, as in
 * `npm run test:postgres` (run by .ci/run) or `npx vitest run --project postgres <files>`, every public-API suite runs
 * on PostgreSQL, the reference model and the random walks among them.
 */
const POSTGRES_SAMPLE = [
  "tests/reliability/concurrency.test.ts",
  "tests/reliability/crash.test.ts",
  "tests/reliability/moves-and-calls-processes.test.ts",
  "tests/tools/crash.test.ts",
  "tests/sessions/concurrency.test.ts",
  "tests/langgraph/contention.test.ts",
  "tests/ai/chat.test.ts",
  "tests/openai-agents/session.test.ts",
];
/**
 * Through the pooler in `npm test`: the suites about connections and one per adapter; the store spec also runs through
 * it (tests/store/spec/pgbouncer.test.ts), so every store unit's SQL does. `npm run test:pgbouncer` (run by .ci/run)
 * takes every public-API suite through it.
 */
const POOLER_SAMPLE = [
  "tests/reliability/concurrency.test.ts",
  "tests/reliability/crash.test.ts",
  "tests/sessions/concurrency.test.ts",
  "tests/langgraph/contention.test.ts",
  "tests/ai/chat.test.ts",
  "tests/openai-agents/session.test.ts",
];
const SAMPLED = process.env.FORKPOINT_PG_SUITES === "sample";
/** In those folders, but with no database at all (codecs, caches, process identities, file restores): the same on any store. */
const STORE_FREE = [
  "tests/ai/json-codec.test.ts",
  "tests/langgraph/mirror-cache.test.ts",
  "tests/langgraph/verified-items.test.ts",
  "tests/sessions/process-identity.test.ts",
  "tests/sessions/workspace-late-write.test.ts",
  "tests/sessions/workspace-replace-race.test.ts",
  "tests/tools/run-turns.test.ts",
];

export default defineConfig({
  test: {
    // The run's temp dir in memory (tests/setup/tmpdir.ts, first: the others make theirs in it), one PostgreSQL server for
    // the run, started in the background (tests/setup/postgres.ts), and src/ with the fixtures compiled once for child
    // processes (tests/setup/compiled.ts); root only, so that the projects share them.
    globalSetup: ["tests/setup/tmpdir.ts", "tests/setup/postgres.ts", "tests/setup/compiled.ts"],
    // Three files at a time even on two cores (vitest's default there is one): the suites mostly wait, on the PostgreSQL
    // server, child processes and files. On two cores a whole run took 552 s with two workers, 487 s with three or four.
    maxWorkers: Math.max(3, availableParallelism() - 1),
    coverage: { provider: "v8", include: ["src/**/*.ts"], reporter: ["text-summary", "text"] },
    projects: [
      {
        test: {
          ...shared,
          name: "sqlite",
          include: ["tests/**/*.test.ts"],
          env: { FORKPOINT_TEST_STORE: "sqlite" },
          setupFiles: ["tests/setup/temp-dirs.ts"],
        },
      },
      {
        test: {
          ...shared,
          name: "postgres",
          include: SAMPLED ? POSTGRES_SAMPLE : PUBLIC_API,
          exclude: STORE_FREE,
          env: { FORKPOINT_TEST_STORE: "postgres" },
          setupFiles: ["tests/setup/temp-dirs.ts", "tests/setup/store.ts"],
        },
      },
      // Those suites (a sample, or all of them) through a real PgBouncer in transaction mode, `preparedStatements: false`.
      {
        test: {
          ...shared,
          name: "pgbouncer",
          include: SAMPLED ? POOLER_SAMPLE : PUBLIC_API,
          exclude: STORE_FREE,
          env: { FORKPOINT_TEST_STORE: "pgbouncer" },
          setupFiles: ["tests/setup/temp-dirs.ts", "tests/setup/store.ts"],
        },
      },
    ],
  },
});
