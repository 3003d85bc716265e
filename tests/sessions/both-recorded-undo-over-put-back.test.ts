// A forced "both" rewind whose recorded call's undo puts back unsaved content over a later hand edit put back: no edit is lost.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull } from "../fixtures/file-tools.js";
import { putBackSession, write } from "../fixtures/put-back-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

// A hand edit, a recorded write over it, a later hand edit and a tool call over that one. The rewind's undo of the tool
// call puts the later edit back; the recorded call's undo then puts the first one back over it, which the move took back
// (the later edit kept, listed in files.kept): the first edit, in no checkpoint, was lost. That undo fails now (the
// plan says it may), the later edit on disk and the recorded call applied; once a checkpoint keeps the later edit, the
// rewind keeps the first.
it("a recorded call's undo over a later hand edit put back: refused until a checkpoint keeps one", async () => {
  const { ws, s, c0 } = await putBackSession(dbs, "forkpoint-both-recorded-over-");
  const b = path.join(ws, "b.txt");
  fs.writeFileSync(b, "first by hand");
  fs.writeFileSync(b, "recorded");
  await s.recordToolCall({ tool: "write", args: { path: b, text: "recorded" }, result: { previous: "first by hand" } });
  await s.checkpoint({ name: "c1" });
  fs.writeFileSync(b, "second by hand");
  await s.invoke("write", { path: b, text: "w" });

  // The plan says so: what the recorded call's undo puts back no one can tell before it runs.
  const planned = await s.plan({ checkpointId: c0.id, scope: "both" });
  expect(planned.blocked).toBeUndefined();
  expect(planned.mayStop).toMatch(/b\.txt.*UNDO_FAILED/);
  const refused = await s.rollback(c0.id, { scope: "both", force: true }).catch((e: unknown) => e);
  expect(refused).toMatchObject({ code: "UNDO_FAILED" });
  expect(readOrNull(b)).toBe("second by hand");
  expect((await s.toolTrack()).map((t) => [t.tool, t.applied])).toEqual([
    ["write", true],
    ["write", false],
  ]);

  await s.checkpoint({ name: "keeps the second" });
  expect((await s.plan({ checkpointId: c0.id, scope: "both" })).mayStop).toBeUndefined();
  const back = await s.rollback(c0.id, { scope: "both", force: true });
  expect(back.files?.kept).toEqual(["b.txt"]);
  expect(readOrNull(b)).toBe("first by hand");
});
