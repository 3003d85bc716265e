// Vitest global setup: one PostgreSQL server for the whole run, started in the background so runs without Postgres
// suites never wait for it; suites wait for its status file (see tests/fixtures/postgres-database.ts).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { startPgBouncer, type PgBouncerServer } from "../fixtures/pgbouncer-server.js";
import { freePort, startPostgres, type PostgresServer } from "../fixtures/postgres-server.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The server's superuser URL (its `postgres` database). */
    pgUrl: string;
    /**
     * A file that holds `{ "ok": true, "pooler" }` once the server accepts connections (`pooler`: the URL of a PgBouncer
     * in transaction mode in front of it, or `poolerError`), or `{ "ok": false, "error" }`.
     */
    pgStatus: string;
  }
}

export default async function setup(project: TestProject) {
  const status = path.join(os.tmpdir(), `forkpoint-pg-status-${process.pid}-${Date.now()}.json`);
  const port = await freePort();
  project.provide("pgUrl", `postgres://postgres@127.0.0.1:${port}/postgres`);
  project.provide("pgStatus", status);
  let pooler: PgBouncerServer | undefined;
  const starting: Promise<PostgresServer | undefined> = startPostgres({ port }).then(
    async (server) => {
      // The pooler the `pgbouncer` project runs the public-API suites through (issue 32: transaction-mode poolers).
      const bouncer = await startPgBouncer(port).then(
        (started) => ({ pooler: (pooler = started).url }),
        (error: unknown) => ({ poolerError: error instanceof Error ? error.message : String(error) }),
      );
      fs.writeFileSync(status, JSON.stringify({ ok: true, ...bouncer }));
      return server;
    },
    (error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      console.error(
        `\n${"!".repeat(78)}\n!! PostgreSQL test server did not start: the Postgres suites ${
          process.env.CI ? "FAIL (CI is set)" : "are SKIPPED"
        }\n!! ${message.replaceAll("\n", "\n!! ")}\n${"!".repeat(78)}\n`,
      );
      fs.writeFileSync(status, JSON.stringify({ ok: false, error: message }));
      return undefined;
    },
  );
  return async () => {
    const server = await starting;
    await pooler?.stop();
    await server?.stop();
    fs.rmSync(status, { force: true });
  };
}
