// A rollback of AI SDK tool calls killed mid-way (SIGKILL of a real child process) is finished when the database is
// reopened with aiToolDefinitions: the steps not started run once, the one running at the crash is reported unknown.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { type RecoveryReport } from "../../src/index.js";
import { aiToolDefinitions } from "../../src/ai/index.js";
import { startWorker } from "../fixtures/workers.js";
import { makeTempDir, removeDir, tempDatabases } from "../helpers.js";
import { fileTools } from "./fixtures/file-tools.js";
import { expireLeases, openForkpoint } from "../fixtures/backend.js";

const dbs = tempDatabases();
const WORKER = fileURLToPath(new URL("./fixtures/crash-mid-rollback.ts", import.meta.url));

it("reopened with aiToolDefinitions, an interrupted rollback undoes the calls it had not reached, once", async () => {
  const dir = makeTempDir();
  try {
    const path = dbs.path();
    const worker = startWorker(WORKER, [path, dir]);
    await worker.ready;
    worker.child.kill("SIGKILL");
    const run = await worker.done;
    await expireLeases(path);
    const { sessionId, checkpointId } = JSON.parse(run.stdout.split("\n")[0]!) as { sessionId: string; checkpointId: string };
    // Killed inside b.txt's undo: c.txt was undone, a.txt not yet.
    expect([existsSync(join(dir, "a.txt")), existsSync(join(dir, "b.txt")), existsSync(join(dir, "c.txt"))]).toEqual([true, true, false]);

    const undone: string[] = [];
    const { tools, undos } = fileTools(dir, async (name) => void undone.push(name));
    const fp = dbs.track(openForkpoint({ path, tools: aiToolDefinitions(tools, undos) }));
    const reports: RecoveryReport[] = [];
    fp.on("recovery", (r) => void reports.push(r));
    const s = await fp.getSession(sessionId, { userId: "u" });
    expect(undone).toEqual(["a.txt"]);
    expect([existsSync(join(dir, "a.txt")), existsSync(join(dir, "b.txt"))]).toEqual([false, true]);
    expect((await s.toolTrack()).map((t) => t.callId)).toEqual([]);
    // b.txt's undo, running at the crash, is reported and never repeated; the rollback again moves nothing.
    expect(reports.flatMap((r) => r.resumed.flatMap((m) => m.unknown.map((t) => t.callId)))).toEqual(["kb"]);
    expect((await fp.recover()).resumed).toEqual([]);
    expect((await s.rollback(checkpointId)).undone).toEqual([]);
    expect(undone).toEqual(["a.txt"]);
  } finally {
    removeDir(dir);
  }
});
