// The store spec through the run's PgBouncer in transaction mode, with `preparedStatements: false`: every store unit
// once through the pooler in every run (the pgbouncer project runs only a sample of the public-API suites by default).
import { PostgresStore } from "../../../src/store/postgres/store.js";
import { freshPgDatabase, pgPooler } from "../../fixtures/postgres-database.js";
import { storeSpec } from "./store-spec.js";

const pooler = await pgPooler();

/** A fresh database on the server, reached through the pooler. */
async function throughPooler(): Promise<PostgresStore> {
  const url = new URL(pooler!);
  url.pathname = new URL(await freshPgDatabase()).pathname;
  const store = new PostgresStore(url.toString(), { preparedStatements: false });
  await store.ready();
  return store;
}

storeSpec("pgbouncer", throughPooler, { skip: !pooler });
