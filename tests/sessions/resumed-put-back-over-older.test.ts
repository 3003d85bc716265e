// A "both" rewind stopped over a recorded call's undo, with a hand edit one of its undos put back on disk, then called
// again: an older call's undo that puts back the hand edit its own run found writes that file next, so the later hand
// edit is drift again (refused, or saved first with force), never held and then lost under the older one.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull } from "../fixtures/file-tools.js";
import { put, putBackSession } from "../fixtures/put-back-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

/** b.txt: edited by hand, written, removed, written elsewhere (recorded), edited by hand again, written. */
async function stoppedRewind() {
  const { ws, s, c0 } = await putBackSession(dbs, "forkpoint-resumed-put-back-");
  const b = path.join(ws, "b.txt");
  put(b, "first by hand");
  await s.invoke("write", { path: b, text: "written" }); // found "first by hand": its undo puts that back
  await s.invoke("remove", { path: b });
  put(b, "recorded");
  await s.recordToolCall({ tool: "write", args: { path: b, text: "recorded" }, result: { previous: null } });
  put(b, "later by hand");
  await s.invoke("write", { path: b, text: "written again" }); // found "later by hand"
  // Its undo puts "later by hand" back; the recorded call's undo leaves it (made after that call); the remove's undo
  // would write over it: the move stops there, the hand edit on disk.
  const stop = await s.rollback(c0.id, { scope: "both", force: true }).then(
    () => null,
    (e: { code: string; message: string }) => e,
  );
  expect(stop?.code).toBe("WORKSPACE_DRIFT");
  expect(stop?.message).toContain("force: true, which saves it first");
  expect(readOrNull(b)).toBe("later by hand");
  return { s, c0, b };
}

it("called again with force, the hand edit on disk is saved first, then the older hand edit put back", async () => {
  const { s, c0, b } = await stoppedRewind();
  expect((await s.plan({ checkpointId: c0.id, scope: "both" })).drift).toEqual(["b.txt"]);
  const moved = await s.rollback(c0.id, { scope: "both", force: true });
  expect(moved.savedDrift?.files).toEqual(["b.txt"]);
  expect(readOrNull(b)).toBe("first by hand");
  expect(moved.files?.kept).toEqual(["b.txt"]);
  const saved = await s.diffFiles(moved.savedDrift!.checkpointId, "disk");
  expect(saved.patch).toContain("-later by hand");
});

it("called again without force, it is refused with the hand edit on disk; once a checkpoint keeps it, it goes on", async () => {
  const { s, c0, b } = await stoppedRewind();
  await expect(s.rollback(c0.id, { scope: "both" })).rejects.toMatchObject({ code: "WORKSPACE_DRIFT" });
  expect(readOrNull(b)).toBe("later by hand");
  const kept = await s.checkpoint({ name: "keep it" });
  await s.rollback(c0.id, { scope: "both" });
  expect(readOrNull(b)).toBe("first by hand");
  expect((await s.diffFiles(kept.id, "disk")).patch).toContain("-later by hand");
  expect(fs.existsSync(path.join(path.dirname(b), "a.txt"))).toBe(true);
});
