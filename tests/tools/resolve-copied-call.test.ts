// A clone's or an import's copy of a call a crash left running belongs to another world: resolving it records its
// outcome in the copy's track but never applies it there, so no move of the copy runs the tool's undo on an effect it
// never had (the source's own call is resolved, and undone, in the source, once).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { SessionHandle } from "../../src/index.js";
import { expireLeases } from "../fixtures/backend.js";
import { heldWriteTool, readOrNull, tempDir, type ToolCallRecord } from "../fixtures/file-tools.js";
import { startWorker } from "../fixtures/workers.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const WORKER = fileURLToPath(new URL("../fixtures/request-move-worker.ts", import.meta.url));

/** Starts held_write in a child process and SIGKILLs it while the tool runs: a call of unknown outcome. */
async function crashedCall(db: string, s: SessionHandle, file: string): Promise<string> {
  const w = startWorker(WORKER, [db, s.id, "alice", "invoke", "send-1", file, `${file}.log`]);
  await w.ready;
  const running = new Promise<void>((resolve) => w.child.stdout.on("data", (d: string) => d.includes("running") && resolve()));
  w.child.stdin.write("go\n");
  await running;
  w.child.kill("SIGKILL");
  await w.done;
  await expireLeases(db);
  return (await s.toolTrack()).find((t) => t.status === "running")!.id;
}

describe("resolveToolCall on a copy of a call a crash left running", () => {
  it.each(["clone", "import"] as const)("%s: the outcome is recorded, never applied; moves of the copy undo nothing", async (how) => {
    const calls: ToolCallRecord[] = [];
    const dir = tempDir();
    const { fp, path: db } = dbs.open({ tools: [heldWriteTool({ calls })] });
    const s = await fp.createSession({ userId: "alice" });
    const [question] = await s.append({ role: "user", content: "send it" });
    const file = path.join(dir, "held.txt");
    const sourceCall = await crashedCall(db, s, file);
    expect(readOrNull(file)).toBe("held");

    let copy: SessionHandle;
    if (how === "clone") copy = await fp.clone(s.id, { userId: "alice" });
    else
      copy = await dbs
        .open({ tools: [heldWriteTool({ calls })] })
        .fp.importSession(await fp.exportSession(s.id, { userId: "alice" }), { userId: "alice" });
    const copied = (await copy.toolTrack()).find((t) => t.tool === "held_write")!;
    expect(copied).toMatchObject({ status: "running", applied: false });

    const resolved = await copy.resolveToolCall(copied.id, { status: "succeeded", result: { previous: null } });
    expect(resolved).toMatchObject({ status: "succeeded", result: { previous: null }, applied: false });
    const q = (await copy.history()).find((m) => m.content === "send it")!;
    const moved = await copy.edit(q.id, { content: "do not send it" });
    expect(moved.undone).toEqual([]);
    expect(calls.filter((c) => c.op === "undo")).toEqual([]);
    expect(readOrNull(file)).toBe("held");

    if (how === "clone") {
      // The source's call is its own: still unknown there, resolved and undone there once.
      await s.resolveToolCall(sourceCall, { status: "succeeded", result: { previous: null } });
      const back = await s.edit(question!.id, { content: "do not send it" });
      expect(back.undone.map((t) => t.id)).toEqual([sourceCall]);
      expect(calls.filter((c) => c.op === "undo")).toHaveLength(1);
      expect(fs.existsSync(file)).toBe(false);
    }
    expect((await fp.verify()).ok).toBe(true);
  });
});
