// plan() of a "both" switch whose undos put back a recorded call's write a later call found (drift to forkpoint), then
// undo that recorded call (its own write, taken back), then replay a call writing the file: not blocked, as the move.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull, tempDir } from "../fixtures/file-tools.js";
import { write } from "../fixtures/put-back-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

it("a switch undoing a recorded write over its own put-back, then replaying: plan not blocked", async () => {
  const ws = tempDir("forkpoint-plan-recorded-over-put-back-");
  const c = path.join(ws, "c.txt");
  fs.writeFileSync(path.join(ws, "a.txt"), "a0");
  const { fp } = dbs.open({ tools: [write] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "start" });
  const c0 = await s.checkpoint({ name: "c0" });
  const main = (await s.branches())[0]!;
  await s.invoke("write", { path: c, text: "w1" });
  await s.rollback(c0.id, { scope: "conversation" });
  fs.writeFileSync(c, "r"); // ran elsewhere, recorded
  await s.recordToolCall({ tool: "write", args: { path: c, text: "r" }, result: { previous: null } });
  await s.invoke("write", { path: c, text: "w2" }); // found the recorded write, drift to forkpoint

  const planned = await s.plan({ branchId: main.id, scope: "both" });
  expect(planned.blocked).toBeUndefined();
  expect(planned.files?.kept ?? []).toEqual([]);
  // The file holds the later call's write over what it found as drift: refused unforced, as the plan says.
  expect(planned.drift).toEqual(["c.txt"]);
  expect(await rejectionOf(s.switchBranch(main.id, { scope: "both" }))).toMatchObject({ code: "WORKSPACE_DRIFT" });
  await s.switchBranch(main.id, { scope: "both", force: true });
  expect(readOrNull(c)).toBe("w1");
});
