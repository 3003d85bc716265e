// A files-only restore marking a call applied again re-marks the recorded calls applied after it too: a later "both" rewind keeps their order.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull } from "../fixtures/file-tools.js";
import { putBackSession, write } from "../fixtures/put-back-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

// A write over a recorded call's content, then a hand edit and a recorded write over it. A files-only restore from
// before the write to after the recorded one marks the write applied again; were the recorded call not marked again
// after it, a "both" rewind to just after the write undid the write (putting back the older content) after the
// recorded call's undo had put the hand edit back, and the hand edit was gone while the move listed it in files.kept.
it("a files-only restore keeps a recorded call after the write it marks applied again", async () => {
  const { ws, s, c0 } = await putBackSession(dbs, "forkpoint-files-remark-");
  const b = path.join(ws, "b.txt");
  fs.writeFileSync(b, "r1");
  await s.recordToolCall({ tool: "write", args: { path: b, text: "r1" }, result: { previous: null } });
  await s.invoke("write", { path: b, text: "w2" });
  const c1 = await s.checkpoint({ name: "c1" });
  fs.writeFileSync(b, "by hand");
  fs.writeFileSync(b, "r3");
  await s.recordToolCall({ tool: "write", args: { path: b, text: "r3" }, result: { previous: "by hand" } });
  const c2 = await s.checkpoint({ name: "c2" });
  await s.rollback(c0.id, { scope: "files" });
  await s.rollback(c2.id, { scope: "files" });
  expect(readOrNull(b)).toBe("r3");

  const back = await s.rollback(c1.id, { scope: "both" });
  expect(back.undone.map((t) => t.args)).toEqual([{ path: b, text: "r3" }]);
  expect(back.files?.kept).toEqual(["b.txt"]);
  expect(readOrNull(b)).toBe("by hand");
});
