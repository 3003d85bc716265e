// Pins a defect: a tool call whose run succeeded but whose completion write lost its connection (a failover, a
// terminated backend) in a server that lives on. `invoke` rejects with CANNOT_CONNECT ("may be retried"), yet the
// result the server held is never recorded: the call stays `running`, a retry with the same requestId is CALL_UNKNOWN,
// and moves report it unknown and leave its effect in the world, until an operator guesses its result for
// resolveToolCall. As with a move cut off midway (issue 32, item 9), the handle should record its own call's end once
// the connection is back, so the retry answers with the recorded result and the next move undoes it.
import path from "node:path";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { openForkpoint } from "../../src/index.js";
import { heldWriteTool, readOrNull, tempDir, type ToolCallRecord } from "../fixtures/file-tools.js";
import { freshPgDatabase, pgServer } from "../fixtures/postgres-database.js";

const url = await pgServer();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!url)("a tool call whose completion loses its connection", () => {
  it.fails(
    "is recorded by its live server once the connection is back: the retry answers, the next move undoes it",
    async () => {
      const db = await freshPgDatabase();
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let started!: () => void;
      const running = new Promise<void>((r) => (started = r));
      const calls: ToolCallRecord[] = [];
      const fp = openForkpoint({ postgres: db, tools: [heldWriteTool({ calls, gate, onRun: () => started() })] });
      const admin = new pg.Client({ connectionString: db });
      await admin.connect();
      try {
        const s = await fp.createSession({ userId: "u" });
        const before = await s.checkpoint({ name: "before" });
        const file = path.join(tempDir(), "held.txt");
        const args = { path: file, text: "held" };
        const call = s.invoke("held_write", args, { requestId: "r1" });
        call.catch(() => undefined);
        await running;
        // The completion's write waits on a lock; the server then ends its connection.
        await admin.query("BEGIN");
        await admin.query("LOCK TABLE tool_results IN ACCESS EXCLUSIVE MODE");
        release();
        let waiting: number[] = [];
        while (waiting.length === 0) {
          await sleep(20);
          const { rows } = await admin.query<{ pid: number }>(
            `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`,
          );
          waiting = rows.map((r) => r.pid);
        }
        for (const pid of waiting) await admin.query("SELECT pg_terminate_backend($1)", [pid]);
        await admin.query("ROLLBACK");
        await expect(call).rejects.toMatchObject({ code: "CANNOT_CONNECT" });
        expect(readOrNull(file)).toBe("held"); // the tool ran

        // The connection is back: a retry of the request answers with the call's result, without running it again.
        expect(await s.invoke("held_write", args, { requestId: "r1" })).toEqual({ previous: null });
        expect(calls.filter((c) => c.op === "run")).toHaveLength(1);
        expect((await s.toolTrack()).map((t) => [t.status, t.applied])).toEqual([["succeeded", true]]);
        const back = await s.rollback(before.id);
        expect({ undone: back.undone.length, unknown: back.unknown.length }).toEqual({ undone: 1, unknown: 0 });
        expect(readOrNull(file)).toBeNull();
      } finally {
        await admin.end();
        await fp.close();
      }
    },
    60_000,
  );
});
