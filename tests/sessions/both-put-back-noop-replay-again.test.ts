// A "both" move stopped before replaying a delete that deleted nothing (its undo put a hand edit back where that delete
// goes, see both-put-back-noop-replay.test.ts) is called again: a checkpoint taken then keeps the hand edit and the move
// goes on, as force: true goes on after saving it.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull } from "../fixtures/file-tools.js";
import { putBackSession } from "../fixtures/put-back-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

for (const again of ["checkpoint", "force"] as const)
  it(`a "both" redo stopped over a hand edit put back goes on when called again (${again})`, async () => {
    const { ws, s, c0 } = await putBackSession(dbs, "forkpoint-put-back-noop-again-", "a0");
    const a = path.join(ws, "a.txt");
    const b = path.join(ws, "b.txt");
    await s.invoke("write", { path: a, text: "w0" });
    await s.rollback(c0.id, { scope: "both" });
    await s.invoke("remove", { path: b }); // nothing there: changes no file
    await s.undo({ scope: "conversation" }); // back to the write, the remove undone
    fs.writeFileSync(b, "by hand");
    await s.invoke("write", { path: b, text: "w2" }); // found the hand edit
    expect(await rejectionOf(s.redo({ scope: "both", force: true }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
    expect(readOrNull(b)).toBe("by hand");

    if (again === "checkpoint") await s.checkpoint({ name: "keeps the hand edit" });
    const moved = await s.redo({ scope: "both", force: again === "force" });
    expect(moved.replayed.map((call) => call.tool)).toEqual(["remove"]);
    // The replayed remove deleted the hand edit, kept in a checkpoint.
    expect(readOrNull(b)).toBeNull();
  });
