// Issue 32: a call whose effect a files restore brings back is undone later with the result of the application the
// restored snapshot holds, not its most recent one. An append runs on an empty file (snapshot "L0\n"), is replayed on
// top of an irreversible note ("N\nL0\n", size before 2), and a files-only rollback restores the snapshot: the later
// undo truncates the file to the first run's size (0), not the replay's (2, which would leave "L0", half a line).
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { appendLineTool, readOrNull, tempDir, noteLineTool } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

for (const away of [false, true]) {
  it(`an append the snapshot holds from its first run is undone to that run's size (${away ? "undone" : "applied"} before the restore)`, async () => {
    const { fp } = dbs.open({ tools: [appendLineTool(), noteLineTool] });
    const ws = path.join(tempDir("forkpoint-restore-undo-result-"), "ws");
    fs.mkdirSync(ws);
    const log = path.join(ws, "log");
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const start = await s.checkpoint({ name: "start" });
    await s.append({ role: "user", content: "note L0" });
    await s.invoke("append_line", { path: log, line: "L0" });
    const noted = await s.checkpoint({ name: "noted" });
    const first = (await s.info()).currentBranchId;
    await s.rollback(start.id, { scope: "conversation" });
    const other = (await s.info()).currentBranchId;
    await s.invoke("note_line", { path: log, line: "N" });
    await s.switchBranch(first, { scope: "conversation" });
    expect(readOrNull(log)).toBe("N\nL0\n");
    if (away) await s.switchBranch(other, { scope: "conversation" });
    await s.rollback(noted.id, { scope: "files" });
    expect(readOrNull(log)).toBe("L0\n");

    await s.rollback(start.id, { scope: "conversation" });
    expect((await s.toolTrack({ branchId: first }))[0]!.applied).toBe(false);
    expect(readOrNull(log)).toBe("");
  });
}
