// A write over a hand edit and a delete after it, taken back by a "both" rewind (the hand edit kept), then replayed by
// a switch back: the write's replayed application found that hand edit again. A later hand edit, a write over it; a
// forced "both" rewind to the first rewind's checkpoint undoes the later write (its hand edit put back), then the
// replayed write, whose undo puts the older hand edit back over the later one: that one was lost while the move listed
// the file in files.kept. Refused before the move now, forced or not, as for a first run's undo.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull } from "../fixtures/file-tools.js";
import { putBackSession, remove, write } from "../fixtures/put-back-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

for (const force of [false, true])
  it(`a replayed write's undo over a later hand edit put back: refused before the move (force ${force})`, async () => {
    const { ws, s, c0 } = await putBackSession(dbs, "forkpoint-replayed-older-over-");
    const b = path.join(ws, "b.txt");
    const main = (await s.info()).currentBranchId;
    fs.writeFileSync(b, "first by hand");
    await s.invoke("write", { path: b, text: "w1" });
    await s.invoke("remove", { path: b });
    const back = await s.rollback(c0.id, { scope: "both" });
    expect(back.files?.kept).toEqual(["b.txt"]);
    expect(readOrNull(b)).toBe("first by hand");
    const c1 = await s.checkpoint({ name: "c1" });
    await s.switchBranch(main, { scope: "both" });
    expect(readOrNull(b)).toBeNull();
    fs.writeFileSync(b, "second by hand");
    await s.invoke("write", { path: b, text: "w2" });

    expect((await s.plan({ checkpointId: c1.id, scope: "both" })).blocked).toContain("force cannot save it first");
    const refused = await rejectionOf(s.rollback(c1.id, { scope: "both", force }));
    expect(refused).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(readOrNull(b)).toBe("w2");
    expect((await s.toolTrack()).map((t) => [t.tool, t.applied])).toEqual([
      ["write", true],
      ["remove", true],
      ["write", true],
    ]);
  });
