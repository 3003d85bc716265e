// A move that replays, in order, a write making a file and a delete whose own run found no file there (its run changed
// nothing): the delete, run again, removes what the write just made. That is the move's own doing, not a save by hand
// during the move: a later replay writing the same file goes on (it once stopped as "changed while this move ran",
// forced or not, which its plan did not foresee).
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { deleteFileTool, readOrNull, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

const deleteFile = deleteFileTool();

for (const scope of ["conversation", "both"] as const)
  it(`a "${scope}" switch replays a write, a delete that first found nothing, and a write, as planned`, async () => {
    const ws = tempDir("forkpoint-noop-delete-");
    const { fp } = dbs.open({ tools: [writeFileTool(), deleteFile] as never[] });
    const s = await fp.createSession({ userId: "u" });
    await s.attachWorkspace(ws);
    const file = path.join(ws, "c.txt");
    await s.append({ role: "user", content: "go" });
    const c0 = await s.checkpoint({ name: "c0" });
    const main = (await s.info()).currentBranchId;
    await s.invoke("write_file", { path: file, text: "one\n" });
    // Removed by hand and kept so by a checkpoint: the delete below finds nothing to delete.
    fs.rmSync(file);
    await s.checkpoint({ name: "removed" });
    await s.invoke("delete_file", { path: file });
    await s.invoke("write_file", { path: file, text: "three\n" });
    await s.rollback(c0.id, { scope });
    expect(readOrNull(file)).toBeNull();

    const plan = await s.plan({ branchId: main, scope });
    expect(plan.blocked).toBeUndefined();
    expect(plan.replayed.map((c) => c.tool)).toEqual(["write_file", "delete_file", "write_file"].slice(scope === "both" ? 1 : 0));
    const r = await s.switchBranch(main, { scope });
    expect(r.replayed.map((c) => c.tool)).toEqual(plan.replayed.map((c) => c.tool));
    expect(readOrNull(file)).toBe("three\n");
    expect((await s.info()).currentBranchId).toBe(main);
  });
