// A file deleted by hand where the move's target has none is no drift (nothing there to lose), yet a "both" move's undo
// may write it before the files step: that write is the move's own, which the restore then takes away again. Taken for
// a hand edit instead, it was left on disk (kept), bringing back content the user had deleted and the target lacks.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

it("a rollback's undo writing a file deleted by hand that the target lacks leaves it deleted, as planned", async () => {
  const ws = tempDir("forkpoint-settled-deletion-");
  const at = path.join(ws, "a.txt");
  const { fp } = dbs.open({ tools: [writeFileTool()] as never[] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  // A hand edit a checkpoint keeps, then a call over it: its undo writes that edit back.
  fs.writeFileSync(at, "by hand\n");
  await s.append({ role: "user", content: "more" });
  await s.checkpoint({ name: "c1" });
  await s.invoke("write_file", { path: at, text: "by the agent\n" });
  // Deleted by hand: c0 has no a.txt either, so this is no drift.
  fs.rmSync(at);

  const planned = await s.plan({ checkpointId: c0.id, scope: "both" });
  expect(planned.drift).toEqual([]);
  expect(planned.blocked).toBeUndefined();
  const listed = [...planned.files!.written, ...planned.files!.deleted, ...(planned.files!.kept ?? []), ...(planned.files!.mayKeep ?? [])];
  expect(listed).not.toContain("a.txt");

  const moved = await s.rollback(c0.id, { scope: "both" });
  expect(moved.undone.map((t) => t.tool)).toEqual(["write_file"]);
  expect(moved.files?.kept ?? []).not.toContain("a.txt");
  expect(readOrNull(at)).toBeNull();
  // Nothing left over as drift either: the files are c0's, as forkpoint knows them.
  expect(await s.plan({ checkpointId: c0.id, scope: "files" })).toMatchObject({ drift: [], files: { written: [], deleted: [] } });
});
