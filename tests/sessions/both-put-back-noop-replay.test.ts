// A delete of a file that was not there changed no file; a "both" move replaying it deletes what the path holds then.
// When an undo of that move put a hand edit back there (a write's run found it), the replay would delete it while
// `files.kept` names it: the move stops before that replay instead, forced or not, with the hand edit on disk.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull } from "../fixtures/file-tools.js";
import { putBackSession, remove, write } from "../fixtures/put-back-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

for (const force of [false, true])
  it(`a "both" redo replaying a delete that deleted nothing over a hand edit put back stops (force ${force})`, async () => {
    const { ws, s, c0 } = await putBackSession(dbs, "forkpoint-put-back-noop-replay-", "a0");
    const a = path.join(ws, "a.txt");
    const b = path.join(ws, "b.txt");
    await s.invoke("write", { path: a, text: "w0" });
    await s.rollback(c0.id, { scope: "both" });
    await s.invoke("remove", { path: b }); // nothing there: changes no file
    await s.undo({ scope: "conversation" }); // back to the write, the remove undone
    fs.writeFileSync(b, "by hand");
    await s.invoke("write", { path: b, text: "w2" }); // found the hand edit

    const stopped = await rejectionOf(s.redo({ scope: "both", force }));
    expect(stopped).toMatchObject({ code: "WORKSPACE_DRIFT" });
    // Unforced, refused before it starts (drift); forced, stopped with the hand edit its undo put back on disk.
    expect(readOrNull(b)).toBe(force ? "by hand" : "w2");
  });
