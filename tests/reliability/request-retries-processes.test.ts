// Three processes run one scripted sequence of writes and moves with the same requestIds at once, as servers retrying
// one request would: each write and move is applied once, every process is told the same answers, and the session,
// its state and the world end as one run of the script leaves them.
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { openForkpoint } from "../fixtures/backend.js";
import { tempDir } from "../fixtures/file-tools.js";
import { startWorker } from "../fixtures/workers.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const WORKER = fileURLToPath(new URL("../fixtures/request-retry-worker.ts", import.meta.url));
const ROUNDS = 3;

describe("one scripted sequence retried by several processes", () => {
  it("applies every write and move once; every process gets the same answers", async () => {
    const dir = tempDir();
    const { fp, path: db } = dbs.open();
    const session = await fp.createSession({ userId: "u" });
    await fp.close();
    const workers = [0, 1, 2].map(() => startWorker(WORKER, [db, session.id, "u", dir, String(ROUNDS)]));
    await Promise.all(workers.map((w) => w.ready));
    for (const w of workers) w.child.stdin.end("go\n");
    const runs = await Promise.all(workers.map((w) => w.done));
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    const reports = runs.map((r) => JSON.parse(r.stdout.trim().split("\n").pop()!) as { runs: number; answers: unknown[] });
    expect(reports[1]!.answers).toEqual(reports[0]!.answers);
    expect(reports[2]!.answers).toEqual(reports[0]!.answers);
    // Per round: f1 and f2 run, f2 replayed by the rollback's undo, f1 and f2 replayed by the edit's undo.
    expect(reports.reduce((n, r) => n + r.runs, 0)).toBe(ROUNDS * 5);

    const touch = defineTool({ name: "touch", run: () => null, undo: () => undefined });
    const again = dbs.track(openForkpoint({ path: db, tools: [touch] }));
    const s = await again.getSession(session.id, { userId: "u" });
    const rounds = Array.from({ length: ROUNDS }, (_, r) => `r${r}-`);
    expect((await s.history()).map((m) => m.content)).toEqual(rounds.map((p) => `${p}m1`));
    const files = rounds.flatMap((p) => [`${p}f1`, `${p}f2`]);
    expect(fs.readdirSync(dir).sort()).toEqual([...files].sort());
    expect((await s.toolTrack()).map((t) => [(t.args as { name: string }).name, t.applied])).toEqual(files.map((f) => [f, true]));
    expect(await s.getState()).toEqual({ n: ROUNDS });
    expect((await again.verify()).ok).toBe(true);
  });
});
