// Setup file of the `postgres` and `pgbouncer` projects: the run's server for tests/fixtures/backend.ts (and child
// processes), and for `pgbouncer` the transaction-mode pooler in front of it; every test skipped, loudly, when they
// could not start (failed when CI is set: pgServer and pgPooler throw), and each test's databases dropped after it.
import { afterAll, afterEach, beforeEach } from "vitest";
import { databasePrefix, enterTest, holdAdminConnection, releaseDatabases, testStore } from "../fixtures/backend.js";
import { pgPooler, pgServer } from "../fixtures/postgres-database.js";

const url = await pgServer();
const pooler = testStore === "pgbouncer" ? await pgPooler() : undefined;
const ready = url !== undefined && (testStore !== "pgbouncer" || pooler !== undefined);
if (ready) {
  process.env.FORKPOINT_TEST_PG_URL = url;
  if (pooler) process.env.FORKPOINT_TEST_POOLER_URL = pooler;
  databasePrefix();
  holdAdminConnection();
}

beforeEach((context) => {
  if (!ready) context.skip(`no ${testStore === "pgbouncer" ? "PgBouncer" : "PostgreSQL"} test server (see the warning above)`);
  enterTest();
});
afterEach(() => releaseDatabases("test"));
afterAll(() => releaseDatabases("file"));
