// A forced move that stops before a replay over a hand edit one of its undos put back says what gets it through: a
// checkpoint, or the move again with force (which saves the edit first). Both are tried here, as the text says.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

for (const way of ["checkpoint", "force"] as const)
  it(`a forced "both" undo stopped over a put-back hand edit goes on after ${way === "force" ? "a forced call again" : "a checkpoint"}`, async () => {
    const ws = tempDir("forkpoint-forced-stop-");
    const { fp } = dbs.open({ tools: [writeFileTool()] as never[] });
    const s = await fp.createSession({ userId: "u" });
    await s.append({ role: "user", content: "hi" });
    await s.attachWorkspace(ws);
    const file = path.join(ws, "d.txt");
    const cp0 = await s.checkpoint({ name: "cp0" });
    await s.invoke("write_file", { path: file, text: "T1" });
    await s.rollback(cp0.id, { force: true });
    fs.writeFileSync(file, "HAND");
    await s.invoke("write_file", { path: file, text: "T2" });

    const stop = await rejectionOf(s.undo({ scope: "both", force: true }));
    expect(stop).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(stop.message).toContain("take a checkpoint to keep it, then move again (or move again with force: true, which saves it first)");
    expect(readOrNull(file)).toBe("HAND");

    let saved: string | undefined;
    if (way === "checkpoint") saved = (await s.checkpoint({ name: "keep" })).id;
    const r = await s.undo({ scope: "both", ...(way === "force" ? { force: true } : {}) });
    if (way === "force") {
      expect(r.savedDrift?.files).toEqual(["d.txt"]);
      saved = r.savedDrift!.checkpointId;
    }
    expect(readOrNull(file)).toBe("T1");
    // The hand edit is kept where the text said: in that checkpoint.
    expect((await s.diffFiles(saved!, "disk")).patch).toContain("-HAND");
  });
