// openForkpoint({ postgres }): a connection string, a pg.PoolConfig or a pg.Pool each open the store; anything else
// (a pg.Client, an array, a number, a class instance, a string or connectionString that is no URL) is a ValidationError
// before any connection.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { ValidationError, openForkpoint, type ForkpointOptions } from "../../src/index.js";
import { freshPgDatabase, pgServer } from "../fixtures/postgres-database.js";

const url = await pgServer();

describe.skipIf(!url)("openForkpoint({ postgres })", () => {
  it("opens a connection string, a pg.PoolConfig and the app's pg.Pool alike", async () => {
    const pool = new pg.Pool({ connectionString: await freshPgDatabase(), max: 2 });
    try {
      for (const postgres of [await freshPgDatabase(), { connectionString: await freshPgDatabase(), max: 2 }, pool]) {
        const fp = openForkpoint({ postgres });
        try {
          const s = await fp.createSession({ userId: "u" });
          await s.append({ role: "user", content: "hi" });
          expect((await fp.listSessions({ userId: "u" })).items[0]).toMatchObject({ id: s.id, messageCount: 1 });
        } finally {
          await fp.close();
        }
      }
    } finally {
      await pool.end();
    }
  });

  it("a socket directory with no server's socket in it is CANNOT_CONNECT, as a refused TCP connection is", async () => {
    const fp = openForkpoint({ postgres: "/nonexistent-forkpoint-socket-dir app", recover: false });
    try {
      await expect(fp.createSession({ userId: "u" })).rejects.toMatchObject({ name: "DatabaseError", code: "CANNOT_CONNECT" });
    } finally {
      await fp.close().catch(() => undefined);
    }
  });

  it("refuses what is none of them, naming the option, before connecting to anything", async () => {
    const client = new pg.Client({ connectionString: await freshPgDatabase() });
    const refused: [unknown, RegExp][] = [
      ["", /must not be empty/],
      [client, /must be a pg\.Pool \(a pg\.Client is one connection/],
      [[url], /must be a connection string, a pg\.PoolConfig or a pg\.Pool/],
      [5432, /must be a connection string, a pg\.PoolConfig or a pg\.Pool/],
      [new URL("postgres://u@localhost/db"), /must be a connection string, a pg\.PoolConfig or a pg\.Pool/],
      [{ connectionString: 5 }, /connectionString must be a non-empty string/],
      [{ connectionString: "" }, /connectionString must be a non-empty string/],
      // node-postgres would read these as a database named so on a host named "base".
      ["not a url", /must be a connection URL \("postgres:\/\/user:password@host:port\/database"\)/],
      ["host=localhost dbname=app", /must be a connection URL/],
      [{ connectionString: "localhost:5432/app" }, /connectionString must be a connection URL/],
    ];
    for (const [postgres, message] of refused) {
      let error: unknown;
      try {
        openForkpoint({ postgres } as ForkpointOptions);
      } catch (e) {
        error = e;
      }
      expect(error, String(postgres)).toBeInstanceOf(ValidationError);
      expect(error).toMatchObject({ field: "postgres", code: "VALIDATION_ERROR", message: expect.stringMatching(message) as unknown });
    }
    // The client was never connected: refusing it touched nothing.
    await client.end().catch(() => undefined);
  });
});
