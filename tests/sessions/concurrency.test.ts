// Several processes write one database file at once: writes serialize, none is lost, positions stay gapless (DESIGN §6.6).
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

import { tempDatabases } from "../helpers.js";
import { startWorker } from "../fixtures/workers.js";
import { openForkpoint } from "../fixtures/backend.js";

const dbs = tempDatabases();
const WORKER = fileURLToPath(new URL("../fixtures/append-worker.ts", import.meta.url));

describe("several processes appending to the same session", () => {
  it("4 processes x 200 messages: 800 messages, positions 1..800 gapless, every worker's messages in order, no errors, all checkpoints restore", async () => {
    const WORKERS = 4;
    const PER_WORKER = 200;
    const CHECKPOINT_EVERY = 50;
    const { fp, path } = dbs.open();
    const session = await fp.createSession({ userId: "alice", title: "shared" });
    await fp.close();

    const workers = Array.from({ length: WORKERS }, (_, w) =>
      startWorker(WORKER, [path, session.id, "alice", `w${w}`, String(PER_WORKER), String(CHECKPOINT_EVERY)]),
    );
    await Promise.all(workers.map((w) => w.ready));
    for (const w of workers) w.child.stdin.end("go\n"); // all start appending at once
    const runs = await Promise.all(workers.map((w) => w.done));

    for (const run of runs) {
      expect(run.stderr, run.stderr).not.toMatch(/Error|SQLITE_BUSY|BUSY/);
      expect(run.code, run.stderr).toBe(0);
    }
    const reports = runs.map(
      (r) => JSON.parse(r.stdout.trim().split("\n").pop()!) as { worker: string; checkpoints: string[]; positions: number[] },
    );

    const reopened = dbs.track(openForkpoint({ path }));
    const s = await reopened.getSession(session.id, { userId: "alice" });
    const history = await s.history();
    expect(history).toHaveLength(WORKERS * PER_WORKER);
    expect(history.map((m) => m.position)).toEqual(Array.from({ length: WORKERS * PER_WORKER }, (_, i) => i + 1));

    for (let w = 0; w < WORKERS; w++) {
      const mine = history.map((m) => m.content as { worker: string; i: number }).filter((c) => c.worker === `w${w}`);
      expect(mine.map((c) => c.i)).toEqual(Array.from({ length: PER_WORKER }, (_, i) => i + 1));
    }
    // what each worker was told matches what is stored
    const byPosition = new Map(history.map((m) => [m.position, m.content as { worker: string; i: number }]));
    for (const report of reports) {
      report.positions.forEach((p, idx) => expect(byPosition.get(p)).toEqual({ worker: report.worker, i: idx + 1 }));
    }

    const checkpointIds = reports.flatMap((r) => r.checkpoints);
    expect(checkpointIds).toHaveLength(WORKERS * (PER_WORKER / CHECKPOINT_EVERY));
    const listed = await reopened.listCheckpoints({ userId: "alice", sessionId: session.id, limit: 100 });
    expect(listed.items.map((c) => c.id).sort()).toEqual([...checkpointIds].sort());
    for (const cp of listed.items) {
      const restored = await s.restore(cp.id);
      expect(restored.history).toHaveLength(cp.position);
      const { worker, i } = cp.metadata as { worker: string; i: number };
      const own = restored.history.map((m) => m.content as { worker: string; i: number }).filter((c) => c.worker === worker);
      expect(own.map((c) => c.i)).toEqual(Array.from({ length: i }, (_, k) => k + 1));
    }
  });
});
