// Two undos of a "both" move put hand edits back in one file: the later call's one no checkpoint keeps, then the older
// call's one a checkpoint keeps. Where forkpoint tells each undo's changes apart as they run (a watcher), the file had
// drifted when the older undo began, so what it puts back counts as changed by hand too, and a replay that writes the
// file stops the move; otherwise that content is made known and the move goes on. The plan says it may stop there.
import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { readOrNull, tempDir, writeFileTool } from "../fixtures/file-tools.js";
import { rejectionOf, tempDatabases } from "../helpers.js";

const dbs = tempDatabases();

it("a plan names the file where a kept put-back lands on one no checkpoint keeps and a replay writes next", async () => {
  const ws = tempDir("forkpoint-put-back-over-put-back-");
  const at = path.join(ws, "a.txt");
  fs.writeFileSync(at, "base\n");
  const { fp } = dbs.open({ tools: [writeFileTool()] as never[] });
  const s = await fp.createSession({ userId: "u" });
  await s.attachWorkspace(ws);
  await s.append({ role: "user", content: "go" });
  const c0 = await s.checkpoint({ name: "c0" });
  const main = (await s.info()).currentBranchId;
  // On main, a call after c0: the switch back replays it over a.txt.
  await s.invoke("write_file", { path: at, text: "on main\n" });
  await s.rollback(c0.id, { scope: "both" });
  // A hand edit a checkpoint keeps, found by a call (forkpoint knew other content there).
  fs.writeFileSync(at, "kept by hand\n");
  await s.checkpoint({ name: "kept" });
  fs.writeFileSync(at, "other\n");
  await s.checkpoint({ name: "other" });
  fs.writeFileSync(at, "kept by hand\n");
  await s.invoke("write_file", { path: at, text: "w1\n" });
  // Then that call's own output, found as a hand edit no checkpoint keeps by a later call (forkpoint knew other
  // content there): its undo puts back just what the older call's undo writes over, so nothing is lost.
  fs.writeFileSync(at, "x\n");
  await s.checkpoint({ name: "x" });
  fs.writeFileSync(at, "w1\n");
  await s.invoke("write_file", { path: at, text: "w2\n" });
  // A call's output over a hand edit stays drift until a checkpoint keeps it.
  await s.checkpoint({ name: "w2" });

  const planned = await s.plan({ branchId: main, scope: "both" });
  expect(planned.blocked).toBeUndefined();
  expect(planned.drift).toEqual([]);
  expect(planned.mayStop).toContain("a.txt");
  expect(planned.files?.mayKeep).toContain("a.txt");

  const moved = await rejectionOf(s.switchBranch(main, { scope: "both" }));
  if (moved instanceof Error) {
    // Stopped before the replay, as the plan said it may, with what the last undo put back on disk.
    expect((moved as { code?: string }).code).toBe("WORKSPACE_DRIFT");
    expect(moved.message).toContain("(a.txt)");
    expect(readOrNull(at)).toBe("kept by hand\n");
  } else expect(readOrNull(at)).toBe("on main\n");
});
