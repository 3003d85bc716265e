// Concurrent processes on one database file and one session (DESIGN §6.6): 4 processes x 500 mixed operations
// (append, setState with an updater, checkpoint, restore). Writes serialize and none is lost: every acknowledged
// operation is present, positions are gapless, no updater's increment is lost, no BUSY reaches a caller, and every
// checkpoint restores at the end with the state and messages its taker saw.
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type Checkpoint } from "../../src/index.js";
import { tempDatabases } from "../helpers.js";
import { startWorker } from "../fixtures/workers.js";
import { openForkpoint, sqlOn, testStore } from "../fixtures/backend.js";

const dbs = tempDatabases();
const WORKER = fileURLToPath(new URL("../fixtures/mixed-ops-worker.ts", import.meta.url));
const SEED = Number(process.env.FORKPOINT_CONCURRENCY_SEED ?? 424_242);

interface Report {
  worker: string;
  appends: { id: string; position: number; i: number }[];
  setStates: number;
  checkpoints: { id: string; mine: number; appended: number }[];
  restores: number;
}

describe("4 processes x 500 mixed operations on the same session (250 on PostgreSQL, 200 through PgBouncer)", () => {
  it("loses nothing: positions gapless, no lost update, no BUSY, every checkpoint restorable (two of them with walWorker)", async () => {
    const WORKERS = 4;
    // On PostgreSQL, where contended writes cost the most, 250 each (1,000 contended operations, every kind a few hundred
    // times); through PgBouncer the engine is PostgreSQL's again: 200 each check the pooler under the same mix.
    const OPS = testStore === "pgbouncer" ? 200 : testStore === "postgres" ? 250 : 500;
    const { fp, path } = dbs.open();
    const session = await fp.createSession({ userId: "alice", title: "shared by 4 processes" });
    const rootBranch = (await session.info()).currentBranchId;
    await fp.close();

    const workers = Array.from({ length: WORKERS }, (_, w) =>
      startWorker(WORKER, [path, session.id, "alice", `w${w}`, String(OPS), String(SEED + w * 101), w % 2 ? "wal-worker" : "inline"]),
    );
    await Promise.all(workers.map((w) => w.ready));
    for (const w of workers) w.child.stdin.end("go\n");
    const runs = await Promise.all(workers.map((w) => w.done));
    for (const run of runs) {
      expect(run.stderr, run.stderr).not.toMatch(/BUSY|locked/i);
      expect(run.stderr, run.stderr).not.toMatch(/Error|FAILED/);
      expect(run.code, run.stderr).toBe(0);
    }
    const reports = runs.map((r) => JSON.parse(r.stdout.trim().split("\n").pop()!) as Report);
    const totalAppends = reports.reduce((n, r) => n + r.appends.length, 0);
    const totalSetStates = reports.reduce((n, r) => n + r.setStates, 0);
    // the mix really was mixed
    for (const r of reports) {
      expect(r.appends.length).toBeGreaterThan(0);
      expect(r.setStates).toBeGreaterThan(0);
      expect(r.checkpoints.length).toBeGreaterThan(0);
      expect(r.restores).toBeGreaterThan(0);
    }

    const reopened = dbs.track(openForkpoint({ path }));
    const s = await reopened.getSession(session.id, { userId: "alice" });
    expect((await s.branches()).map((b) => b.id)).toEqual([rootBranch]);

    // every entry of the branch, any kind: positions 1..N with no gap, N = every acknowledged write
    const positions = (
      await sqlOn<{ position: number }>(path, `SELECT position FROM entries WHERE branch_id = $1 ORDER BY position`, [rootBranch])
    ).map((r) => r.position);
    expect(positions).toEqual(Array.from({ length: totalAppends + totalSetStates }, (_, i) => i + 1));

    // every acknowledged message, where its worker was told, in its worker's order
    const history = await s.history();
    expect(history).toHaveLength(totalAppends);
    const byId = new Map(history.map((m) => [m.id, m]));
    for (const r of reports) {
      for (const a of r.appends) {
        const m = byId.get(a.id);
        expect(m, `${r.worker} message ${a.i}`).toBeDefined();
        expect(m!.position).toBe(a.position);
        expect(m!.content).toEqual({ worker: r.worker, i: a.i });
      }
      const mine = history.map((m) => m.content as { worker: string; i: number }).filter((c) => c.worker === r.worker);
      expect(mine.map((c) => c.i)).toEqual(Array.from({ length: r.appends.length }, (_, i) => i + 1));
    }

    // no updater's increment lost
    const state = (await s.getState()) as Record<string, number>;
    expect(state.total).toBe(totalSetStates);
    for (const r of reports) expect(state[r.worker]).toBe(r.setStates);

    // every checkpoint restores, with what its taker saw
    const listed: Checkpoint[] = [];
    let cursor: string | null = null;
    do {
      const page: { items: Checkpoint[]; nextCursor: string | null } = await s.listCheckpoints({ limit: 1000, cursor });
      listed.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor);
    const acknowledged = reports.flatMap((r) => r.checkpoints.map((c) => ({ ...c, worker: r.worker })));
    expect(listed.map((c) => c.id).sort()).toEqual(acknowledged.map((c) => c.id).sort());
    for (const cp of acknowledged) {
      const restored = await s.restore(cp.id);
      expect((restored.state as Record<string, number>)[cp.worker] ?? 0).toBe(cp.mine);
      const own = restored.history.map((m) => m.content as { worker: string; i: number }).filter((c) => c.worker === cp.worker);
      expect(own.map((c) => c.i)).toEqual(Array.from({ length: cp.appended }, (_, i) => i + 1));
      expect(restored.history.every((m, i, all) => i === 0 || all[i - 1]!.position < m.position)).toBe(true);
    }
  }, 180_000);
});
