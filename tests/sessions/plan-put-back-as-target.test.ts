// plan() of a "both" rewind whose undo puts back a hand edit just as the target holds it, over other content now: the
// file changes, so the plan lists it written, as the move changes it.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull, tempDir } from "../fixtures/file-tools.js";
import { write } from "../fixtures/put-back-tools.js";
import { tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

it("a rewind putting back a hand edit the target holds: plan lists the file written", async () => {
  const ws = tempDir("forkpoint-plan-put-back-as-target-");
  const c = path.join(ws, "c.txt");
  fs.writeFileSync(c, "h");
  const { fp } = dbs.open({ tools: [write] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "start" });
  const c0 = await s.checkpoint({ name: "c0" }); // holds "h"
  await s.invoke("write", { path: c, text: "v" });
  fs.writeFileSync(c, "h"); // by hand, as c0 holds it
  await s.invoke("write", { path: c, text: "w" }); // found the hand edit

  const planned = await s.plan({ checkpointId: c0.id, scope: "both" });
  await s.rollback(c0.id, { scope: "both", force: true });
  expect(readOrNull(c)).toBe("h");
  expect(planned.files?.written).toEqual(["c.txt"]);
});
