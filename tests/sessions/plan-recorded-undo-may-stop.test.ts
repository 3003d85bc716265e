// plan() says a rewind may stop where the move stops: a recorded call's undo puts back what its tool kept (here a hand
// edit forkpoint never saw) and an older call's undo writes that file next, any scope, forced or not.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull, tempDir } from "../fixtures/file-tools.js";
import { write } from "../fixtures/put-back-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

for (const scope of ["conversation", "both"] as const)
  for (const force of [false, true])
    it(`a rewind over a recorded call's undo then an older call's: plan says it may stop (${scope}, force ${force})`, async () => {
      const ws = tempDir("forkpoint-plan-may-stop-");
      const a = path.join(ws, "a.txt");
      fs.writeFileSync(a, "a0");
      const { fp } = dbs.open({ tools: [write] });
      const s = await fp.createSession({ userId: "u" });
      await s.attachWorkspace(ws);
      await s.append({ role: "user", content: "start" });
      const c0 = await s.checkpoint({ name: "c0" });
      await s.invoke("write", { path: a, text: "w1" });
      fs.writeFileSync(a, "by hand");
      fs.writeFileSync(a, "r2"); // ran elsewhere, recorded: its undo puts the hand edit back
      await s.recordToolCall({ tool: "write", args: { path: a, text: "r2" }, result: { previous: "by hand" } });

      const planned = await s.plan({ checkpointId: c0.id, scope });
      expect(planned.blocked).toBeUndefined();
      expect(planned.mayStop).toContain("a.txt");
      const refused = await rejectionOf(s.rollback(c0.id, { scope, force }));
      expect(refused).toMatchObject({ code: "WORKSPACE_DRIFT" });
      // Unforced, a "both" move refuses the recorded call's own write first, as drift (the plan lists it).
      if (scope === "both" && !force) expect(planned.drift).toEqual(["a.txt"]);
      else {
        expect(String(refused.message)).toContain("this move's undo of recorded call");
        expect(readOrNull(a)).toBe("by hand");
      }
    });

// Recorded over what the older call left (no hand edit between): the plan cannot tell that from the above, and the
// move goes through.
it("a rewind over a recorded call's undo that puts back the older call's write: plan says it may stop, it does not", async () => {
  const ws = tempDir("forkpoint-plan-may-stop-");
  const a = path.join(ws, "a.txt");
  fs.writeFileSync(a, "a0");
  const { fp } = dbs.open({ tools: [write] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "start" });
  const c0 = await s.checkpoint({ name: "c0" });
  await s.invoke("write", { path: a, text: "w1" });
  fs.writeFileSync(a, "r2");
  await s.recordToolCall({ tool: "write", args: { path: a, text: "r2" }, result: { previous: "w1" } });

  expect((await s.plan({ checkpointId: c0.id, scope: "conversation" })).mayStop).toContain("a.txt");
  await s.rollback(c0.id, { scope: "conversation", force: true });
  expect(readOrNull(a)).toBe("a0");
});
