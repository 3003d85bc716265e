// A delete that found nothing, undone in a rewind, deletes a later hand edit (saved first); an older write's undo then puts back the hand edit it found.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull, tempDir } from "../fixtures/file-tools.js";
import { remove, write } from "../fixtures/put-back-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

for (const scope of ["conversation", "both"] as const)
  for (const force of [true, false])
    it(`rollback(${scope}, force ${force}) past a no-op delete puts back the hand edit a write found`, async () => {
      const ws = tempDir("forkpoint-noop-delete-undo-");
      const c = path.join(ws, "c.txt");
      fs.writeFileSync(path.join(ws, "a.txt"), "init");
      const { fp } = dbs.open({ tools: [write, remove] as never[] });
      const s = await fp.createSession({ userId: "u" });
      await s.attachWorkspace(ws);
      await s.append({ role: "user", content: "start" });
      const c0 = await s.checkpoint({ name: "c0" });
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
