// A hand-made file forkpoint cannot capture (a named pipe, a file over `maxPayloadBytes`) where a move's undo writes:
// the move is refused before any step, forced or not, and the plan says so; the file stays as it is, nothing recorded.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { write } from "../fixtures/put-back-tools.js";
import { tempDir } from "../fixtures/file-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();
const LIMIT = 64 * 1024;

for (const kind of ["a named pipe", "a file over the size limit"])
  for (const scope of ["conversation", "both"] as const)
    it(`${kind} made by hand where a ${scope} rewind's undo writes: refused even when forced, the file kept`, async () => {
      const ws = tempDir("forkpoint-uncaptured-");
      const { fp } = dbs.open({ tools: [write] as never[], limits: { maxPayloadBytes: LIMIT } });
      const s = await fp.createSession({ userId: "u" });
      await s.attachWorkspace(ws);
      await s.append({ role: "user", content: "start" });
      const c0 = await s.checkpoint({ name: "c0" });
      const b = path.join(ws, "b.txt");
      await s.invoke(write, { path: b, text: "x" });
      fs.rmSync(b);
      if (kind === "a named pipe") execFileSync("mkfifo", [b]);
      else fs.writeFileSync(b, Buffer.alloc(LIMIT + 1, 65));
      const before = { branches: await s.branches(), checkpoints: (await s.listCheckpoints()).items };

      const planned = await s.plan({ checkpointId: c0.id, scope });
      expect(planned.blocked).toContain(`b.txt is ${kind === "a named pipe" ? "a named pipe" : `a file of ${LIMIT + 1} bytes`}`);
      const refused = await s.rollback(c0.id, { scope, force: true }).catch((e: unknown) => e);
      expect(refused).toMatchObject({ code: "WORKSPACE_DRIFT", message: planned.blocked });

      const st = fs.lstatSync(b);
      expect(kind === "a named pipe" ? st.isFIFO() : st.size).toBe(kind === "a named pipe" ? true : LIMIT + 1);
      expect({ branches: await s.branches(), checkpoints: (await s.listCheckpoints()).items }).toEqual(before);
    });
