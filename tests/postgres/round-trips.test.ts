// Round trips are what a unit costs on a network: a chat turn on PostgreSQL is four (BEGIN with its locks, the read of
// the session's head, its inserts as one statement, COMMIT), and what the batched inserts carry comes back exactly.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { freshPgDatabase, pgServer } from "../fixtures/postgres-database.js";

const url = await pgServer();

describe.skipIf(!url)("round trips on PostgreSQL", () => {
  it("a turn is two queries; a message's text and metadata come back byte for byte", async () => {
    const pool = new pg.Pool({ connectionString: await freshPgDatabase(), max: 2 });
    const sent: string[] = [];
    pool.on("connect", (client) => {
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as unknown as { query: unknown }).query = (config: unknown, ...rest: unknown[]) => {
        sent.push(typeof config === "string" ? config : (config as { text: string }).text);
        return query(config, ...rest);
      };
    });
    const fp = openForkpoint({ postgres: pool });
    try {
      const s = await fp.createSession({ userId: "u" });
      await s.turn([{ role: "user", content: "warm" }], { name: "warm" });
      const hostile = "it's a $1 \\x00ff -- not a comment; DROP TABLE entries; \u00e9\u{1F600} \\' ''";
      sent.length = 0;
      const turn = await s.turn(
        [
          { role: "user", content: hostile, metadata: { n: -1.5e-7, big: 2 ** 53 - 1, t: true, nul: null, s: "$2" } },
          { role: "assistant", content: "ok" },
        ],
        { name: "it's $3" },
      );
      expect(sent).toHaveLength(4);
      // The two messages as one two-row insert, the checkpoint beside it.
      expect(sent[2]).toMatch(/^WITH w0 AS \(INSERT INTO entries .* VALUES \(\$1, .*\), \(\$16, .*\)\) INSERT INTO checkpoints /s);
      expect(sent[3]).toBe("COMMIT");
      const [asked] = await s.history({ branchId: turn.checkpoint.branchId }).then((h) => h.slice(-2));
      expect(asked!.content).toBe(hostile);
      expect(asked!.metadata).toEqual({ n: -1.5e-7, big: 2 ** 53 - 1, t: true, nul: null, s: "$2" });
      expect((await s.restore(turn.checkpoint.id)).checkpoint.name).toBe("it's $3");
      expect(await fp.verify()).toMatchObject({ ok: true });
    } finally {
      await fp.close();
      await pool.end();
    }
  });
});
