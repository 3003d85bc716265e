// Setup file of the `postgres` project: the run's server for tests/fixtures/backend.ts (and child processes), every
// test skipped, loudly, when the server could not start (failed when CI is set: pgServer throws), and each test's
// databases closed and dropped after it.
import { afterAll, afterEach, beforeEach } from "vitest";
import { databasePrefix, enterTest, releaseDatabases } from "../fixtures/backend.js";
import { pgServer } from "../fixtures/postgres-database.js";

const url = await pgServer();
if (url) {
  process.env.FORKPOINT_TEST_PG_URL = url;
  databasePrefix();
}

beforeEach((context) => {
  if (!url) context.skip("no PostgreSQL test server (see the warning above)");
  enterTest();
});
afterEach(() => releaseDatabases("test"));
afterAll(() => releaseDatabases("file"));
