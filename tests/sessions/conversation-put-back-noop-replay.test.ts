// A delete of a file that was not there changed no file; a "conversation" move replaying it deletes what the path holds
// then. When an undo of that move put a hand edit back there (a write's run found it), the replay would delete it, on
// no disk and in no applied call's result: refused before the move, forced or not.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull } from "../fixtures/file-tools.js";
import { putBackSession, remove, write } from "../fixtures/put-back-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

for (const force of [false, true])
  it(`undo() of a rewind replaying a delete that deleted nothing over a hand edit put back: refused (force ${force})`, async () => {
    const { ws, s, c0 } = await putBackSession(dbs, "forkpoint-conversation-noop-replay-", "a0");
    const b = path.join(ws, "b.txt");
    await s.invoke("remove", { path: b }); // nothing there: changes no file
    await s.rollback(c0.id, { scope: "conversation" });
    fs.writeFileSync(b, "by hand");
    await s.invoke("write", { path: b, text: "w" }); // found the hand edit

    const refused = await rejectionOf(s.undo({ scope: "conversation", force }));
    expect(refused).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(readOrNull(b)).toBe("w");
    expect((await s.toolTrack()).map((t) => [t.tool, t.applied])).toEqual([["write", true]]);
  });
