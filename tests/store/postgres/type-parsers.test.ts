// An app's own node-postgres type parsers (pg.types is one registry for the whole process) change nothing forkpoint
// reads: its queries use pg-types' built-in parsers, whatever the app set before or after loading it.
import { describe, expect, it } from "vitest";
import { openForkpoint } from "../../../src/index.js";
import { freshPgDatabase, pgServer } from "../../fixtures/postgres-database.js";
import { startWorker } from "../../fixtures/workers.js";

const server = await pgServer();
const WRITER = "tests/fixtures/pg-session-writer.ts";

interface Written {
  sessionId: string;
  undone: string[];
  file: string;
  counter: number;
  state: unknown;
  autos: unknown[];
  verify: { ok: boolean; problems: unknown[] };
  own: string;
  other: string | null;
}

async function write(url: string, other: string, appParsers: boolean): Promise<Written> {
  const run = await startWorker(WRITER, [url, "alice", other, ...(appParsers ? ["--app-parsers"] : [])]).done;
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Written;
}

describe.skipIf(!server)("postgres reads with the app's global type parsers", () => {
  it("writes, moves, restores and verifies as without them; exports are the same bytes either way", async () => {
    const url = await freshPgDatabase();
    // The app's process opens the new database first: the migrations run under its parsers too.
    const app = await write(url, "-", true);
    const plain = await write(url, app.sessionId, false);
    const appAgain = await write(url, plain.sessionId, true);

    // The same story told with and without the app's parsers reads back the same.
    for (const run of [app, plain, appAgain]) {
      expect(run.verify).toMatchObject({ ok: true, problems: [] });
      expect(run.autos).toEqual([false, false, false]);
      expect(run.state).toEqual({ city: "Lisbon", nights: 2.5, booked: false });
      expect(run.undone).toEqual(["bump", "bump"]);
      expect(run.file).toBe("draft 1\n");
    }
    // What each process read of the other's session is what the other read of it, byte for byte.
    expect(plain.other).toBe(app.own);
    expect(appAgain.other).toBe(plain.own);
    const fp = openForkpoint({ postgres: url });
    try {
      expect(JSON.stringify(await fp.exportSession(app.sessionId, { userId: "alice" }))).toBe(app.own);
      expect(await fp.verify()).toMatchObject({ ok: true, sessions: 3 });
    } finally {
      await fp.close();
    }
  });
});
