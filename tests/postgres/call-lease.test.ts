// Another app server's tool call on PostgreSQL holds the session's moves back by a lease: renewed for as long as the call
// runs (however much longer than one term), and left to run out, by the database's clock, when that server dies.
import fs from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { openForkpoint, type ToolInvocation } from "../../src/index.js";
import { heldWriteTool, readOrNull, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { freshPgDatabase, pgServer } from "../fixtures/postgres-database.js";
import { startWorker } from "../fixtures/workers.js";

const url = await pgServer();
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

const ids = (list: ToolInvocation[]) => list.map((t) => t.id);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A session with one write_file call; then another server calls held_write on it (lease `leaseMs`) and keeps it running. */
async function liveCallOnAnotherServer(leaseMs: number) {
  const dir = tempDir("forkpoint-pg-call-lease-");
  cleanup.push(() => fs.rmSync(dir, { recursive: true, force: true }));
  const db = await freshPgDatabase();
  const fp = openForkpoint({ postgres: db, leaseMs, tools: [writeFileTool(), heldWriteTool()] });
  cleanup.push(() => fp.close());
  const s = await fp.createSession({ userId: "u" });
  const cp = await s.checkpoint({ name: "before" });
  await s.invoke("write_file", { path: path.join(dir, "older.txt"), text: "older" });
  const held = path.join(dir, "held.txt");
  const caller = startWorker("tests/fixtures/held-call.ts", [db, s.id, "u", held, String(leaseMs)]);
  cleanup.push(() => caller.child.kill("SIGKILL"));
  await caller.ready;
  if (readOrNull(held) !== "held") throw new Error(`the other server's call never started:\n${(await caller.done).stderr}`);
  const admin = new pg.Client({ connectionString: db });
  await admin.connect();
  cleanup.push(() => admin.end());
  const [older, heldCall] = (await s.toolTrack()) as [ToolInvocation, ToolInvocation];
  return { fp, s, cp, held, older, heldCall, caller, admin };
}

describe.skipIf(!url)("a tool call's lease on PostgreSQL", () => {
  it("is renewed while the call runs: past its first term a move is still refused, and recover does not call it unknown", async () => {
    const LEASE_MS = 900;
    const { fp, s, cp, held, older, heldCall, caller, admin } = await liveCallOnAnotherServer(LEASE_MS);
    const [{ firstTerm }] = (await admin.query<{ firstTerm: number }>(`SELECT lease_until AS "firstTerm" FROM running_calls`)).rows as [
      { firstTerm: number },
    ];
    // Until the database's clock is past the lease the call was journaled with: only renewals hold it from here on.
    const past = async () =>
      (await admin.query<{ past: boolean }>(`SELECT extract(epoch from clock_timestamp()) * 1000 > $1::float8 AS past`, [firstTerm]))
        .rows[0]!.past;
    for (let i = 0; !(await past()); i++) {
      if (i > 2_000) throw new Error("the database's clock never passed the lease's first term");
      await sleep(20);
    }

    await expect(s.rollback(cp.id)).rejects.toMatchObject({ name: "ConflictError", code: "CALL_IN_PROGRESS" });
    expect((await fp.recover()).unknown).toEqual([]);
    expect(readOrNull(held)).toBe("held");

    caller.child.stdin.write("go\n");
    const { code, stderr } = await caller.done;
    expect(code, stderr).toBe(0);
    expect((await admin.query(`SELECT 1 FROM running_calls`)).rowCount).toBe(0);
    const moved = await s.rollback(cp.id);
    expect({ undone: ids(moved.undone), unknown: ids(moved.unknown) }).toEqual({ undone: [heldCall.id, older.id], unknown: [] });
    expect(readOrNull(held)).toBeNull();
  });

  it("of a server that died holds moves back until it runs out; then the call is unknown", async () => {
    // Far longer than the test: nothing but the update below makes it run out.
    const { fp, s, cp, held, older, heldCall, caller, admin } = await liveCallOnAnotherServer(600_000);
    caller.child.kill("SIGKILL");
    await caller.done;

    await expect(s.rollback(cp.id)).rejects.toMatchObject({ name: "ConflictError", code: "CALL_IN_PROGRESS" });
    expect((await fp.recover()).unknown).toEqual([]);

    await admin.query(`UPDATE running_calls SET lease_until = 0`);
    expect(ids((await fp.recover()).unknown)).toEqual([heldCall.id]);
    const moved = await s.rollback(cp.id);
    expect({ undone: ids(moved.undone), unknown: ids(moved.unknown) }).toEqual({ undone: [older.id], unknown: [heldCall.id] });
    expect(readOrNull(held)).toBe("held");
  });

  it("that runs out while its server still runs the call: the move reports it unknown; its end is recorded, and the next move undoes it", async () => {
    const { fp, s, cp, held, older, heldCall, caller, admin } = await liveCallOnAnotherServer(600_000);
    // As if the server stalled past its lease (a long pause, a partition): the database judges the call's owner gone.
    await admin.query(`UPDATE running_calls SET lease_until = 0`);
    const moved = await s.rollback(cp.id);
    expect({ undone: ids(moved.undone), unknown: ids(moved.unknown) }).toEqual({ undone: [older.id], unknown: [heldCall.id] });
    expect(readOrNull(held)).toBe("held");

    caller.child.stdin.write("go\n");
    const { code, stderr, stdout } = await caller.done;
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/^done /m);
    const [, ended] = (await s.toolTrack({ branchId: heldCall.branchId })) as [ToolInvocation, ToolInvocation];
    expect(ended).toMatchObject({ id: heldCall.id, status: "succeeded" });
    // Its effect is in the world, off the lineage the move went to: the record says so, and the next move undoes it.
    expect(ended.applied).toBe(true);
    expect(ids((await s.plan({ checkpointId: cp.id })).undone)).toEqual([heldCall.id]);
    const again = await s.rollback(cp.id);
    expect({ undone: ids(again.undone), unknown: ids(again.unknown) }).toEqual({ undone: [heldCall.id], unknown: [] });
    expect(readOrNull(held)).toBeNull();
  });
});
