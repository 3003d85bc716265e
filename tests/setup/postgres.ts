// Vitest global setup: one PostgreSQL server for the whole run, started in the background so runs without Postgres
// suites never wait for it; suites wait for its status file (see tests/fixtures/postgres-database.ts).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { TestProject } from "vitest/node";
import { freePort, startPostgres, type PostgresServer } from "../fixtures/postgres-server.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The server's superuser URL (its `postgres` database). */
    pgUrl: string;
    /** A file that holds `{ "ok": true }` once the server accepts connections, or `{ "ok": false, "error" }`. */
    pgStatus: string;
  }
}

export default async function setup(project: TestProject) {
  const status = path.join(os.tmpdir(), `forkpoint-pg-status-${process.pid}-${Date.now()}.json`);
  const port = await freePort();
  project.provide("pgUrl", `postgres://postgres@127.0.0.1:${port}/postgres`);
  project.provide("pgStatus", status);
  const starting: Promise<PostgresServer | undefined> = startPostgres({ port }).then(
    (server) => {
      fs.writeFileSync(status, JSON.stringify({ ok: true }));
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
    await (await starting)?.stop();
    fs.rmSync(status, { force: true });
  };
}
