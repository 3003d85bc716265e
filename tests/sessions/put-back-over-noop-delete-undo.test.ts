// A delete that found nothing, undone in a rewind, deletes a later hand edit (saved first); an older write's undo then puts back the hand edit it found.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull } from "../fixtures/file-tools.js";
import { putBackSession, remove, write } from "../fixtures/put-back-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

for (const scope of ["conversation", "both"] as const)
  for (const force of [true, false])
    it(`rollback(${scope}, force ${force}) past a no-op delete puts back the hand edit a write found`, async () => {
      const { ws, s, c0 } = await putBackSession(dbs, "forkpoint-noop-delete-undo-", "init");
      const c = path.join(ws, "c.txt");
      fs.writeFileSync(c, "H3");
      await s.invoke("write", { path: c, text: "w5" }); // found H3
      fs.rmSync(c);
      await s.invoke("remove", { path: c }); // nothing there: changes no file
      fs.writeFileSync(c, "H8");
      const taken = force ? undefined : await s.checkpoint({ name: "keeps H8" });

      const moved = await s.rollback(c0.id, { scope, force });
      expect(readOrNull(c)).toBe("H3");
      if (force) expect(moved.savedDrift?.files).toEqual(["c.txt"]);
      if (scope === "both") expect(moved.files?.kept).toEqual(["c.txt"]);
      // H8 is kept too: in the checkpoint the forced move saved first, or the one taken before.
      const keeps = force ? moved.savedDrift!.checkpointId : taken!.id;
      expect((await s.diffFiles(keeps, "disk")).patch).toContain("-H8");
    });
