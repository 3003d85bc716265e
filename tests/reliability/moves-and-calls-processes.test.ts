// Three processes make tool calls, checkpoints, rollbacks, undos, redos and switches on one session at once: whatever
// each is refused, the world ends exactly as the session says (each applied call's file is there, no other is), no
// call off the current lineage stays applied, and every call has an outcome.
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { defineTool } from "../../src/index.js";
import { openForkpoint } from "../fixtures/backend.js";
import { tempDir } from "../fixtures/file-tools.js";
import { startWorker } from "../fixtures/workers.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const WORKER = fileURLToPath(new URL("../fixtures/moves-calls-worker.ts", import.meta.url));
/** Only the refusals a move or a call may meet beside the others' (checked by name, so another one fails the test). */
const REFUSALS = new Set(["MOVE_IN_PROGRESS", "CALL_IN_PROGRESS", "NOTHING_TO_UNDO", "NOTHING_TO_REDO"]);

describe("tool calls and moves from several processes on one session", () => {
  it.each([1, 2])("seed %i: the files are exactly the applied calls of the current lineage", async (seed) => {
    const dir = tempDir();
    const { fp, path: db } = dbs.open();
    const session = await fp.createSession({ userId: "u" });
    await session.append({ role: "user", content: "go" });
    await fp.close();
    const workers = ["w0", "w1", "w2"].map((w, i) => startWorker(WORKER, [db, session.id, "u", w, "60", String(seed * 10 + i), dir]));
    await Promise.all(workers.map((w) => w.ready));
    for (const w of workers) w.child.stdin.end("go\n");
    const runs = await Promise.all(workers.map((w) => w.done));
    let applied = 0;
    for (const run of runs) {
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).not.toContain("FAILED");
      const { codes } = JSON.parse(run.stdout.trim().split("\n").pop()!) as { codes: Record<string, number> };
      for (const key of Object.keys(codes)) {
        const code = key.split(":")[1]!;
        if (code !== "ok") expect(REFUSALS, key).toContain(code);
      }
      applied += codes["invoke:ok"] ?? 0;
    }
    expect(applied).toBeGreaterThan(0);

    const touch = defineTool({ name: "touch", run: () => null, undo: () => undefined });
    const again = dbs.track(openForkpoint({ path: db, tools: [touch] }));
    const s = await again.getSession(session.id, { userId: "u" });
    const current = await s.toolTrack();
    expect(current.filter((t) => t.status !== "succeeded")).toEqual([]);
    expect(current.every((t) => t.applied)).toBe(true);
    const lineage = new Set(current.map((t) => t.id));
    for (const b of await s.branches())
      for (const t of await s.toolTrack({ branchId: b.id })) if (t.applied) expect(lineage.has(t.id), t.id).toBe(true);
    expect(fs.readdirSync(dir).sort()).toEqual(current.map((t) => (t.args as { name: string }).name).sort());
    expect((await again.verify()).ok).toBe(true);
  });
});
