// The store spec on PostgreSQL: each store a fresh database on the run's server.
import { PostgresStore } from "../../../src/store/postgres/store.js";
import { freshPgDatabase, pgServer } from "../../fixtures/postgres-database.js";
import { storeSpec } from "./store-spec.js";

storeSpec("postgres", async () => PostgresStore.open(await freshPgDatabase()), { skip: !(await pgServer()) });
