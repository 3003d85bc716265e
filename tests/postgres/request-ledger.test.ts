// The request ledger on a network: a request id costs a turn no round trip (its record goes with the COMMIT), and a
// connection lost around the COMMIT (the server committed or not, the client cannot tell) is safe to retry.
import pg from "pg";
import type { Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { DatabaseError, openForkpoint } from "../../src/index.js";
import { freshPgDatabase, pgServer } from "../fixtures/postgres-database.js";

const url = await pgServer();

const question = (text: string) => [
  { role: "user", content: text },
  { role: "assistant", content: `re: ${text}` },
];

/** Every statement text a pool's clients send, and per round trip the statements sent before any answered. */
function recording(pool: pg.Pool) {
  const trips: string[][] = [];
  let pending = 0;
  pool.on("connect", (client) => {
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
    (client as unknown as { query: unknown }).query = (config: unknown, ...rest: unknown[]) => {
      if (pending === 0) trips.push([]);
      trips.at(-1)!.push(typeof config === "string" ? config : (config as { text: string }).text);
      pending++;
      const answer = query(config, ...rest);
      const done = () => void pending--;
      answer.then(done, done);
      return answer;
    };
  });
  return {
    trips,
    async reset() {
      while (pending > 0) await new Promise((r) => setImmediate(r));
      trips.length = 0;
    },
  };
}

/**
 * A pool whose next COMMIT is cut off: `"after"` lets it reach the server and drops every answer, then closes the
 * socket once the server has committed (the request's record is visible); `"before"` closes the socket instead of
 * sending it (the server rolls back).
 */
function cuttingPool(database: string) {
  const pool = new pg.Pool({ connectionString: database, max: 2 });
  const admin = new pg.Pool({ connectionString: database, max: 1 });
  const state: { cut: "after" | "before" | null; requestId: string } = { cut: null, requestId: "" };
  pool.on("connect", (client) => {
    const stream = (client as unknown as { connection: { stream: Socket } }).connection.stream;
    let deaf = false;
    const emit = stream.emit.bind(stream) as (event: string, ...args: unknown[]) => boolean;
    (stream as unknown as { emit: unknown }).emit = (event: string, ...args: unknown[]) =>
      deaf && event === "data" ? true : emit(event, ...args);
    const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
    (client as unknown as { query: unknown }).query = (config: unknown, ...rest: unknown[]) => {
      const text = typeof config === "string" ? config : (config as { text: string }).text;
      if (text !== "COMMIT" || state.cut === null) return query(config, ...rest);
      const cut = state.cut;
      state.cut = null;
      if (cut === "before") {
        stream.destroy();
        return query(config, ...rest);
      }
      deaf = true;
      const answer = query(config, ...rest);
      void (async () => {
        for (;;) {
          // A turn's request is kept on its checkpoint's row; other verbs' in the ledger's table.
          const { rows } = await admin.query(
            `SELECT (SELECT count(*) FROM requests WHERE request_id = $1) + (SELECT count(*) FROM checkpoints WHERE request_id = $1) AS n`,
            [state.requestId],
          );
          if (Number(rows[0].n) === 1) break;
          await new Promise((r) => setTimeout(r, 5));
        }
        stream.destroy();
      })();
      return answer;
    };
  });
  return { pool, admin, state };
}

describe.skipIf(!url)("the request ledger on PostgreSQL", () => {
  it("a turn with a request id is the one round trip a turn without one is", async () => {
    const pool = new pg.Pool({ connectionString: await freshPgDatabase(), max: 2, pipeline: true } as pg.PoolConfig);
    const { trips, reset } = recording(pool);
    const fp = openForkpoint({ postgres: pool });
    try {
      const s = await fp.createSession({ userId: "u" });
      await s.turn(question("warm"), { name: "warm" });
      await reset();
      await s.turn(question("plain"), { name: "plain" });
      const plain = trips.map((t) => t.length);
      await reset();
      await s.turn(question("once"), { name: "once" }, { requestId: "r-1" });
      expect(trips.map((t) => t.length)).toEqual(plain);
      expect(plain).toEqual([4]);
      // The request goes on the checkpoint's row, in the statement that inserts it.
      expect(trips[0]!.some((t) => /request_answer/.test(t))).toBe(true);
      // A retry: the record refuses the write at COMMIT, and the answer is read.
      await reset();
      const again = await s.turn(question("once"), { name: "once" }, { requestId: "r-1" });
      expect(again.messages.map((m) => m.content)).toEqual(["once", "re: once"]);
      expect((await s.history()).length).toBe(6);
    } finally {
      await fp.close();
    }
  });

  it("the connection lost after COMMIT reached the server: the call fails, its retry returns the committed answer", async () => {
    const { pool, admin, state } = cuttingPool(await freshPgDatabase());
    const fp = openForkpoint({ postgres: pool });
    try {
      const s = await fp.createSession({ userId: "u" });
      await s.append({ role: "system", content: "start" });
      Object.assign(state, { cut: "after", requestId: "lost-ack" });
      const error = await s.turn(question("ambiguous"), { name: "t" }, { requestId: "lost-ack" }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(DatabaseError);
      expect(error).toMatchObject({ code: "CANNOT_CONNECT" });
      const retry = await s.turn(question("ambiguous"), { name: "t" }, { requestId: "lost-ack" });
      expect(retry.messages.map((m) => [m.position, m.content])).toEqual([
        [2, "ambiguous"],
        [3, "re: ambiguous"],
      ]);
      expect((await s.history()).map((m) => m.content)).toEqual(["start", "ambiguous", "re: ambiguous"]);
      expect((await s.listCheckpoints()).items.map((c) => c.id)).toEqual([retry.checkpoint.id]);
      expect(await fp.verify()).toMatchObject({ ok: true });
    } finally {
      await fp.close();
      await admin.end();
    }
  });

  it("a move's COMMIT acknowledgement lost: the retried undo moves nothing more and answers as the first", async () => {
    const { pool, admin, state } = cuttingPool(await freshPgDatabase());
    const fp = openForkpoint({ postgres: pool });
    try {
      const s = await fp.createSession({ userId: "u" });
      const [q] = await s.append(question("first"));
      const root = (await s.info()).currentBranchId;
      const edited = await s.edit(q!.id, { content: "second" });
      await s.switchBranch(root);
      Object.assign(state, { cut: "after", requestId: "undo-1" });
      await expect(s.undo({ requestId: "undo-1" })).rejects.toMatchObject({ code: "CANNOT_CONNECT" });
      expect((await s.info()).currentBranchId).toBe(edited.branch.id);
      const retry = await s.undo({ requestId: "undo-1" });
      expect(retry.branch.id).toBe(edited.branch.id);
      expect((await s.info()).currentBranchId).toBe(edited.branch.id);
      // One undo was made (the switch back): the next takes back the edit.
      expect((await s.undo()).branch.id).toBe(root);
      Object.assign(state, { cut: "before", requestId: "redo-1" });
      await expect(s.redo({ requestId: "redo-1" })).rejects.toMatchObject({ code: "CANNOT_CONNECT" });
      expect((await s.info()).currentBranchId).toBe(root);
      expect((await s.redo({ requestId: "redo-1" })).branch.id).toBe(edited.branch.id);
      expect((await s.redo({ requestId: "redo-1" })).branch.id).toBe(edited.branch.id);
      // The redo was made once: the next one redoes the switch back to the root.
      expect((await s.redo()).branch.id).toBe(root);
    } finally {
      await fp.close();
      await admin.end();
    }
  });

  it("the connection lost before COMMIT was sent: nothing was written, the retry applies the call once", async () => {
    const { pool, admin, state } = cuttingPool(await freshPgDatabase());
    const fp = openForkpoint({ postgres: pool });
    try {
      const s = await fp.createSession({ userId: "u" });
      Object.assign(state, { cut: "before", requestId: "never-sent" });
      await expect(s.append(question("lost"), { requestId: "never-sent" })).rejects.toMatchObject({ code: "CANNOT_CONNECT" });
      expect(await s.history()).toEqual([]);
      const retry = await s.append(question("lost"), { requestId: "never-sent" });
      expect(retry.map((m) => m.position)).toEqual([1, 2]);
      expect(await s.append(question("lost"), { requestId: "never-sent" })).toEqual(retry);
      expect((await s.history()).length).toBe(2);
    } finally {
      await fp.close();
      await admin.end();
    }
  });
});
