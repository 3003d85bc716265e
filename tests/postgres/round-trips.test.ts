// Round trips are what a unit costs on a network: a chat turn on PostgreSQL is four statements (BEGIN with its locks,
// the read of the session's head, its inserts as one statement, COMMIT) in two round trips on a pipelining client
// (BEGIN goes with the read, the inserts with COMMIT), and what the batched inserts carry comes back exactly.
import pg from "pg";
import { describe, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { freshPgDatabase, pgServer } from "../fixtures/postgres-database.js";

const url = await pgServer();

describe.skipIf(!url)("round trips on PostgreSQL", () => {
  it("a turn is four statements in two round trips; a message's text and metadata come back byte for byte", async () => {
    const pool = new pg.Pool({ connectionString: await freshPgDatabase(), max: 2, pipeline: true } as pg.PoolConfig);
    const sent: string[] = [];
    /** Per round trip, the statements sent while none of its earlier ones had answered. */
    const trips: string[][] = [];
    let pending = 0;
    /** What the socket saw: "w" per write, "r" per answer read ("ww r ww r" is two round trips on the wire). */
    let wire = "";
    pool.on("connect", (client) => {
      const stream = (client as unknown as { connection: { stream: import("node:net").Socket } }).connection.stream;
      const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
      (stream as unknown as { write: unknown }).write = (...args: unknown[]) => ((wire += "w"), write(...args));
      // Ahead of the driver's own listener, which answers a read with the next write at once.
      stream.prependListener("data", () => (wire += "r"));
      const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
      (client as unknown as { query: unknown }).query = (config: unknown, ...rest: unknown[]) => {
        const text = typeof config === "string" ? config : (config as { text: string }).text;
        sent.push(text);
        if (pending === 0) trips.push([]);
        trips.at(-1)!.push(text);
        pending++;
        const answer = query(config, ...rest);
        const done = () => void pending--;
        answer.then(done, done);
        return answer;
      };
    });
    const fp = openForkpoint({ postgres: pool });
    try {
      const s = await fp.createSession({ userId: "u" });
      await s.turn([{ role: "user", content: "warm" }], { name: "warm" });
      const hostile = "it's a $1 \\x00ff -- not a comment; DROP TABLE entries; \u00e9\u{1F600} \\' ''";
      sent.length = 0;
      trips.length = 0;
      wire = "";
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
      expect(trips.map((t) => t.length)).toEqual([2, 2]);
      // Each trip's statements leave before any answer comes back: two runs of writes, not four.
      expect(wire.split(/r+/).filter(Boolean)).toHaveLength(2);
      expect(trips[0]![0]).toMatch(/^BEGIN .*pg_advisory_xact_lock/);
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
